import { setTimeout as sleep } from 'node:timers/promises'
import { errorText } from '../../core/errors.js'
import { phrase } from '../../testing/fake-live-server/index.js'
import type { FakeRealtimeConnection } from '../../testing/fake-realtime-server/connection.js'
import { FakeRealtimeServer } from '../../testing/fake-realtime-server/index.js'
import { HOME_ASSISTANT_CALLS, HOME_ASSISTANT_LIGHT } from '../household-scene.js'
import type { ModelSide } from './model-side.js'
import { type RunContext, type Say, type Seen, typedRecap } from './run-context.js'

/** How long the model side waits for the device before it calls the scene broken. */
const GUARD_MS = 300_000

/**
 * The fake Realtime service playing the household scene over OpenAI's protocol, the same scene
 * as Gemini's as far as the protocol allows: the request and the gated call, what is pending said
 * at once, the phone's yes and the result; the garage asked for and never approved (OpenAI never
 * withdraws a call: it is withdrawn when the session ends); a long answer talked over, which the
 * device cuts and truncates to what the room heard; the mute button.
 */
export async function openaiSide(ctx: RunContext, o: { wake: boolean }): Promise<ModelSide> {
  const { say, seen } = ctx
  const server = await FakeRealtimeServer.start({
    chat: [(body) => ({ text: typedReply(body, seen) })],
  })
  ctx.defer(() => server.close())
  const state = { finished: false, muted: false, errors: [] as string[] }
  void server
    .waitForConnection(0, GUARD_MS)
    .then((conn) => {
      ctx.defer(watch(conn, say))
      return scene(conn, server, o.wake, state)
    })
    .then(
      () => {
        state.finished = true
      },
      (err: unknown) => state.errors.push(errorText(err)),
    )
  return {
    provider: { kind: 'openai', model: 'gpt-realtime', baseUrl: server.baseUrl },
    env: { OPENAI_API_KEY: 'offline-run-key' },
    finished: () => state.finished,
    until: (check, timeoutMs) => server.until(check, timeoutMs),
    doorAnswer: () => {
      const final = server.connections[0]?.outputs.find((o) => o.callId === 'call-1_final')
      return final ? JSON.stringify(final.output) : undefined
    },
    differences: (_seen, beforeWake) => {
      const wrong = [...state.errors.map((e) => `the model side: ${e}`)]
      if (beforeWake && server.connections.length !== 1)
        wrong.push(`${server.connections.length} sessions opened, not 1 (on the wake phrase)`)
      const conn = server.connections[0]
      if (!state.finished) wrong.push('the model side did not reach the end of its scene')
      for (const e of conn?.errors ?? []) wrong.push(`the service refused an event: ${e.code}`)
      if ((conn?.eventsOf('conversation.item.truncate').length ?? 0) === 0)
        wrong.push('the cut reply was never truncated to what the room heard')
      if (!state.muted) wrong.push('the model side never heard the microphone stop (mute)')
      return wrong
    },
  }
}

async function scene(
  c: FakeRealtimeConnection,
  s: FakeRealtimeServer,
  wake: boolean,
  heard: { muted: boolean },
) {
  const until = (check: () => boolean) => s.until(check, GUARD_MS)
  const outputFor = (id: string) => () => c.outputs.some((x) => x.callId === id)
  const spoken = (n: number) => () => c.eventsOf('response.create').length >= n && !c.responding
  // The person speaks once a reply has been heard: speech over it would be a barge-in (the
  // server's VAD cancels the reply), which comes only where the scene means one.
  const played = (p: string) => sleep(phraseMs(p) + 400)
  if (wake) {
    // The service transcribes what it heard: the wake phrase (the second opinion) and all.
    await until(() => c.heardMs >= 1000)
    c.user('Hey Jarvis, please unlock the front door for the plumber.')
  } else {
    await until(() => c.heardMs > 0)
    await sleep(1200)
    c.user('Please unlock the front door for the plumber.')
  }
  c.replies.push({ phrases: ['waiting'] }, { phrases: ['unlocked'] })
  c.reply({ calls: [{ callId: 'call-1', ...HOME_ASSISTANT_CALLS.door }] })
  await until(outputFor('call-1'))
  await until(outputFor('call-1_final'))
  await until(spoken(2))
  await played('unlocked')
  c.user('And open the garage.')
  c.replies.push({ phrases: ['waiting'] })
  c.reply({ calls: [{ callId: 'call-2', ...HOME_ASSISTANT_CALLS.garage }] })
  await until(outputFor('call-2'))
  await until(spoken(3))
  await played('waiting')
  // The light needs no phone: its output is the result, and the model answers it at once.
  c.user('And the kitchen light on, please.')
  c.reply({ calls: [{ callId: 'call-3', ...HOME_ASSISTANT_LIGHT }] })
  await until(outputFor('call-3'))
  await until(spoken(4))
  await sleep(400)
  c.user('What time is it?')
  const truncated = () => c.eventsOf('conversation.item.truncate').length
  const before = truncated()
  if (wake) {
    // Timed by the microphone file: the long answer starts before "Hey Jarvis, stop" and plays past it.
    await until(() => c.heardMs >= 12_000)
    c.reply({ phrases: ['checking', 'time', 'hello', 'time', 'hello', 'checking'], hold: true })
    await until(() => c.heardMs >= 16_000)
    c.user('Hey Jarvis, stop, thanks.')
  } else {
    c.reply({ phrases: ['checking', 'time', 'hello'], hold: true })
    await sleep(900)
    c.user('Stop, thanks.')
  }
  // The device cuts its record of the reply to what the room heard.
  await until(() => truncated() > before)
  // Someone presses mute: the device tells the service its microphone stopped.
  const stopped = (e: { type: string }) =>
    e.type === 'input_audio_buffer.clear' || e.type === 'input_audio_buffer.commit'
  await until(() => c.received.some(stopped))
  heard.muted = true
}

function phraseMs(name: string): number {
  return phrase(name).pcm.length / 48
}

/** Prints what the model side received that matters: answers to calls, and truncations. */
function watch(conn: FakeRealtimeConnection, say: Say) {
  let seen = 0
  const t = setInterval(() => {
    for (; seen < conn.received.length; seen++) {
      const e = conn.received[seen] as { type: string; [k: string]: unknown }
      if (e.type === 'conversation.item.create') {
        const item = e.item as { type: string; call_id?: string; output?: string }
        if (item.type === 'function_call_output')
          say('[model←]', `${item.call_id}: output ${item.output ?? ''}`)
      } else if (e.type === 'response.create') {
        say('[model←]', 'response.create (one at a time: after the active one)')
      } else if (e.type === 'conversation.item.truncate') {
        say(
          '[model←]',
          `truncate ${String(e.item_id)} at ${String(e.audio_end_ms)} ms (what the room heard)`,
        )
      }
    }
  }, 10)
  return () => clearInterval(t)
}

/** The typed reply, from the chat history it is sent and what the house saw, never canned. */
function typedReply(body: Record<string, unknown>, seen: Seen): string {
  const messages = (body.messages ?? []) as {
    role: string
    content?: string | null
    tool_call_id?: string
    tool_calls?: { id: string; function: { name: string } }[]
  }[]
  const callIds = messages
    .flatMap((m) => m.tool_calls ?? [])
    .filter((c) => c.function.name === HOME_ASSISTANT_CALLS.door.name)
    .map((c) => c.id)
  const answered = messages.some(
    (m) =>
      m.role === 'tool' &&
      callIds.includes(m.tool_call_id ?? '') &&
      /^\{"output"/.test(m.content ?? ''),
  )
  return typedRecap(answered, seen)
}
