import { realClock } from '../../src/adapters/clock/real-clock.js'
import {
  OpenAIRealtime,
  type OpenAIRealtimeOptions,
} from '../../src/adapters/openai/openai-realtime.js'
import { silentLogger } from '../../src/core/logger.js'

export const OPENAI_KEY = 'sk-test-FAKE-0123456789abcdef'

/** The adapter over the real SDK: the test key, gpt-realtime, no logs, the real clock unless `over` says otherwise. */
export function openaiRealtime(over: Partial<OpenAIRealtimeOptions> = {}): OpenAIRealtime {
  return new OpenAIRealtime({
    apiKey: OPENAI_KEY,
    model: 'gpt-realtime',
    voice: 'marin',
    transcriptionModel: 'gpt-4o-mini-transcribe',
    logger: silentLogger,
    clock: realClock(),
    ...over,
  })
}

export const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms))
