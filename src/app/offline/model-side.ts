import {
  FakeLiveServer,
  type ReceivedFrame,
  type Script,
} from '../../testing/fake-live-server/index.js'
import { HOME_ASSISTANT_CALLS } from '../household-scene.js'
import { type RunContext, type Say, type Seen, typedRecap } from './run-context.js'

/**
 * The model's side of the house — a fake service playing the household scene — as the offline
 * run needs it, whichever provider the appliance speaks to (`--provider`).
 */
export interface ModelSide {
  /** The appliance's `provider` config, pointed at the fake. */
  readonly provider: Record<string, unknown>
  /** The key's environment variable for the config loader (a fake key). */
  readonly env: Record<string, string>
  /** The scene has played to its last step. */
  finished(): boolean
  /** Resolves once `check()` holds. */
  until(check: () => boolean, timeoutMs: number): Promise<unknown>
  /** What the model was finally told about the front door's call (`call-1`), as JSON. */
  doorAnswer(): string | undefined
  /** Where the model's side saw the scene go otherwise than written; empty when it played as written. */
  differences(seen: Seen, beforeWake?: Uint8Array): string[]
}

const GEMINI_MODEL = 'gemini-2.5-flash-native-audio-preview-12-2025'

/** The fake Live service playing `scene` over the Gemini wire protocol. */
export async function geminiSide(ctx: RunContext, scene: Script): Promise<ModelSide> {
  const { logger, say, seen } = ctx
  const server = await FakeLiveServer.start({
    logger,
    scripts: [scene],
    // The typed reply states only what the history it is given and the house really show.
    generate: [(body) => ({ text: typedReply(body, seen) })],
  })
  ctx.defer(() => server.close())
  ctx.defer(
    watchGemini(server, say, () => {
      seen.streamEnd = true
    }),
  )
  return {
    provider: { model: GEMINI_MODEL, textModel: 'gemini-3.5-flash', baseUrl: server.baseUrl },
    env: { GEMINI_API_KEY: 'offline-run-key' },
    finished: () => server.connections[0]?.finished === true,
    until: (check, timeoutMs) => server.until(check, timeoutMs),
    doorAnswer: () => {
      const finals = server.received
        .filter((f) => f.key === 'toolResponse')
        .flatMap(
          (f) =>
            ((f.frame.toolResponse as { functionResponses?: Record<string, unknown>[] })
              ?.functionResponses ?? []) as Record<string, unknown>[],
        )
        .filter((r) => r.id === 'call-1' && r.willContinue !== true)
      return finals.length > 0 ? JSON.stringify(finals.at(-1)?.response) : undefined
    },
    differences: (s, beforeWake) => {
      const wrong: string[] = []
      if (beforeWake) {
        if (server.connections.length !== 1)
          wrong.push(`${server.connections.length} sessions opened, not 1 (on the wake phrase)`)
        const heard = server.connections[0]?.heardAudio()
        if (heard && heard.indexOf(Buffer.from(beforeWake)) >= 0)
          wrong.push('the sentence without the wake phrase reached the model')
      }
      if (!server.connections[0]?.finished)
        wrong.push('the model side did not reach the end of its scene')
      for (const e of server.errors) wrong.push(`the model side: ${e}`)
      if (!s.streamEnd) wrong.push('the model side never heard the microphone end its stream')
      return wrong
    },
  }
}

/** Prints what the model side received that matters: answers to calls, and the end of audio. */
function watchGemini(server: FakeLiveServer, say: Say, onStreamEnd: () => void) {
  let seen = 0
  const t = setInterval(() => {
    for (; seen < server.received.length; seen++) {
      const f = server.received[seen] as ReceivedFrame
      if (f.key === 'toolResponse') {
        const responses = (f.frame.toolResponse as { functionResponses?: unknown[] })
          ?.functionResponses as Record<string, unknown>[] | undefined
        for (const r of responses ?? []) {
          const how = r.willContinue
            ? `interim ${JSON.stringify(r.response)}`
            : `final, scheduling ${String(r.scheduling ?? 'none')}: ${JSON.stringify(r.response)}`
          say('[model←]', `${String(r.id)}: ${how}`)
        }
      } else if (
        (f.frame.realtimeInput as { audioStreamEnd?: boolean } | undefined)?.audioStreamEnd
      ) {
        onStreamEnd()
        say('[model←]', 'audioStreamEnd: the microphone is muted, no audio leaves')
      }
    }
  }, 10)
  return () => clearInterval(t)
}

/** Gemini's typed reply, from the history the text model is sent and what the house saw, never canned. */
function typedReply(body: Record<string, unknown>, seen: Seen): string {
  const history = JSON.stringify(body.contents ?? [])
  const answered = (name: string) =>
    new RegExp(`"functionResponse":\\{[^}]*"name":"${name}","response":\\{"output"`).test(history)
  return typedRecap(answered(HOME_ASSISTANT_CALLS.door.name), seen)
}
