import type { RealtimeServerEvent } from 'openai/resources/realtime/realtime'
import { errorText } from '../../core/errors.js'
import {
  PROBE_INSTRUCTION,
  PROBE_TOOL,
  type ProbeResult,
  type ProbeSession,
  type ProbeSink,
  probeToolCalls,
} from '../live-support/tool-call-probe.js'
import { openRealtimeSocket, redactKey } from './client.js'

/**
 * `nocturn doctor --probe` on the Realtime service (the procedure: live-support/tool-call-probe.ts).
 * Text only (no audio is generated or billed as such), no VAD: the probe drives every response.
 */
export async function probeRealtimeToolCalls(o: {
  apiKey: string
  model: string
  baseUrl?: string | undefined
  holdMs?: number
  timeoutMs?: number
}): Promise<ProbeResult> {
  try {
    return await probeToolCalls((sink) => openProbeSession(o, sink), o)
  } catch (err) {
    throw new Error(redactKey(errorText(err), o.apiKey))
  }
}

async function openProbeSession(
  o: { apiKey: string; model: string; baseUrl?: string | undefined; timeoutMs?: number },
  sink: ProbeSink,
): Promise<ProbeSession> {
  const rt = await openRealtimeSocket(o)
  const session: ProbeSession = {
    say(text) {
      rt.send({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
      })
      rt.send({ type: 'response.create' })
    },
    close: () => rt.close({ code: 1000, reason: 'probe done' }),
  }
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the realtime service did not set the probe session up')),
        o.timeoutMs ?? 15_000,
      )
      rt.socket.once('unexpected-response', (_req, res) =>
        reject(new Error(`the service answered ${res.statusCode} to the connection`)),
      )
      rt.socket.once('error', (err) => reject(err))
      rt.on('error', (err) => {
        reject(err)
        sink.fail(err)
      })
      rt.on('event', (e: RealtimeServerEvent) => {
        if (e.type === 'session.updated') {
          clearTimeout(timer)
          resolve()
        } else if (e.type === 'response.function_call_arguments.done') sink.signal('called')
        else if (e.type === 'response.done') sink.signal('idle')
        else if (
          e.type === 'response.output_text.delta' ||
          e.type === 'response.output_audio_transcript.delta'
        )
          sink.signal('spoke')
      })
      rt.socket.once('open', () =>
        rt.send({
          type: 'session.update',
          session: {
            type: 'realtime',
            instructions: PROBE_INSTRUCTION,
            output_modalities: ['text'],
            audio: { input: { turn_detection: null } },
            tools: [
              {
                type: 'function',
                name: PROBE_TOOL,
                description: 'A test tool that takes a few seconds.',
                parameters: { type: 'object', properties: {} },
              },
            ],
            tool_choice: 'auto',
          },
        }),
      )
    })
  } catch (err) {
    session.close()
    throw err
  }
  return session
}
