import type { RealtimeServerEvent } from 'openai/resources/realtime/realtime'
import { errorText } from '../../core/errors.js'
import { openRealtimeSocket, redactKey } from './client.js'

export const PROBE_TOOL = 'nocturn_probe_wait'

export interface ProbeResult {
  /** `asynchronous`: the model spoke while the call had no output; `sequential`: it waited. */
  readonly verdict: 'asynchronous' | 'sequential' | 'no call'
  /** How long the call was held without its output. */
  readonly heldMs: number
}

/**
 * `nocturn doctor --probe`: one short real session that makes a call block, to see what the
 * capability table can only claim. The model is asked to call a test tool; its output is held back
 * for `holdMs`, and meanwhile the model is asked to say something. A model that answers while the
 * call has no output calls asynchronously; one that says nothing until the output arrives is
 * sequential — approvals would be dead air. Text only (no audio is generated or billed as such),
 * no VAD: the probe drives every response itself.
 */
export async function probeToolCalls(o: {
  apiKey: string
  model: string
  baseUrl?: string | undefined
  holdMs?: number
  timeoutMs?: number
}): Promise<ProbeResult> {
  const holdMs = o.holdMs ?? 4000
  const rt = await openRealtimeSocket(o)
  const events: RealtimeServerEvent[] = []
  let wake: () => void = () => {}
  const next = (check: (e: RealtimeServerEvent) => boolean, ms: number) =>
    new Promise<RealtimeServerEvent | undefined>((resolve) => {
      const found = () => events.find(check)
      const t = setTimeout(() => resolve(found()), ms)
      wake = () => {
        const e = found()
        if (!e) return
        clearTimeout(t)
        resolve(e)
      }
      wake()
    })
  let failure: Error | undefined
  rt.on('event', (e) => {
    events.push(e)
    wake()
  })
  rt.on('error', (err) => {
    failure ??= new Error(redactKey(err.message, o.apiKey))
    wake()
  })
  const timeoutMs = o.timeoutMs ?? 15_000
  try {
    await new Promise<void>((resolve, reject) => {
      rt.socket.once('open', () => resolve())
      rt.socket.once('error', (err) => reject(err))
      rt.socket.once('unexpected-response', (_req, res) =>
        reject(new Error(`the service answered ${res.statusCode} to the connection`)),
      )
    })
    rt.send({
      type: 'session.update',
      session: {
        type: 'realtime',
        instructions:
          'This is a short automatic test. When asked, call the tool; while it runs, keep talking.',
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
    })
    const say = (text: string) => {
      rt.send({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
      })
      rt.send({ type: 'response.create' })
    }
    if (!(await next((e) => e.type === 'session.updated', timeoutMs))) throw setupFailed(failure)
    say(`Please call ${PROBE_TOOL} now.`)
    const call = await next((e) => e.type === 'response.function_call_arguments.done', timeoutMs)
    if (call?.type !== 'response.function_call_arguments.done')
      return { verdict: 'no call', heldMs: 0 }
    const firstDone = events.length
    await next((e) => e.type === 'response.done', timeoutMs)
    // The call has no output: does the model still answer?
    say('While that runs, say one short sentence.')
    const t0 = Date.now()
    const spoke = await next(
      (e) =>
        events.indexOf(e) >= firstDone &&
        (e.type === 'response.output_text.delta' ||
          e.type === 'response.output_audio_transcript.delta'),
      holdMs,
    )
    return { verdict: spoke ? 'asynchronous' : 'sequential', heldMs: Date.now() - t0 }
  } catch (err) {
    throw new Error(redactKey(errorText(err), o.apiKey))
  } finally {
    rt.close({ code: 1000, reason: 'probe done' })
  }
}

function setupFailed(failure: Error | undefined): Error {
  return failure ?? new Error('the realtime service did not set the probe session up')
}
