import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import { defaultPersona } from '../../core/persona.js'
import type { Clock } from '../../ports/clock.js'
import type { LiveEvents } from '../../ports/live-llm.js'
import {
  PROBE_INSTRUCTION,
  PROBE_TOOL,
  type ProbeResult,
  type ProbeSink,
  probeToolCalls,
} from '../live-support/tool-call-probe.js'
import { GeminiLive } from './gemini-live.js'
import { redactKey } from './redact.js'

/**
 * `nocturn doctor --probe` on Gemini Live (the procedure: live-support/tool-call-probe.ts). The
 * session is opened as the appliance opens one (`GeminiLive`: the same setup, the test tool declared
 * as the appliance would declare its tools for this model), so what blocks here blocks there. The
 * model answers in audio (a live model may have no text output); its transcript or audio counts as
 * speaking.
 */
export async function probeGeminiToolCalls(o: {
  apiKey: string
  model: string
  baseUrl?: string | undefined
  holdMs?: number
  timeoutMs?: number
  logger: Logger
  clock: Clock
}): Promise<ProbeResult> {
  const live = new GeminiLive({ ...o, connectTimeoutMs: o.timeoutMs ?? 15_000 })
  const setup = {
    persona: { ...defaultPersona, instruction: PROBE_INSTRUCTION },
    tools: [
      {
        name: PROBE_TOOL,
        description: 'A test tool that takes a few seconds.',
        parameters: { type: 'object' as const, properties: {} },
      },
    ],
    nonBlockingTools: true,
  }
  try {
    return await probeToolCalls(async (sink) => {
      const conn = await live.open(setup, probeEvents(sink))
      return { say: (text) => conn.sendText(text), close: () => conn.close() }
    }, o)
  } catch (err) {
    throw new Error(redactKey(errorText(err), o.apiKey))
  }
}

function probeEvents(sink: ProbeSink): LiveEvents {
  const spoke = () => sink.signal('spoke')
  return {
    audio: spoke,
    outputTranscription: spoke,
    // A call ends the model's turn until it has its output (a blocking call), or not at all.
    toolCall: () => {
      sink.signal('called')
      sink.signal('idle')
    },
    turnComplete: () => sink.signal('idle'),
    closed: (i) => {
      if (!i.byClient)
        sink.fail(new Error(`the live service closed the probe: ${i.code} ${i.reason}`))
    },
    inputTranscription() {},
    interrupted() {},
    generationComplete() {},
    toolCallCancellation() {},
    goAway() {},
    resumptionUpdate() {},
    usage() {},
  }
}
