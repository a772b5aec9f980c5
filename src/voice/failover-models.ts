import type { LLM, LLMRequest } from '../ports/llm.js'
import type { Speech } from '../ports/speech.js'
import type { ProviderOrder } from './provider-order.js'

/**
 * Typed turns in the live failover's order: a provider resting after a failed session is skipped,
 * and a turn that fails goes to the next provider — unless text already streamed to the phone
 * (the next one would say it again) or the caller gave up (docs/voice-driver.md, "Failover").
 */
export function failoverLLM(providers: readonly LLM[], order: ProviderOrder): LLM {
  return {
    next(request, signal) {
      let streamed = false
      const onText = request.onText
      const watched: LLMRequest = onText
        ? {
            ...request,
            onText: (delta) => {
              streamed = true
              onText(delta)
            },
          }
        : request
      return order.quietly(
        (i) => (providers[i] as LLM).next(watched, signal),
        () => !streamed && !signal.aborted,
      )
    },
  }
}

/** Announcements said in the same order: the first provider that is not resting and can speak. */
export function failoverSpeech(providers: readonly Speech[], order: ProviderOrder): Speech {
  return {
    synthesize: (request, signal) =>
      order.quietly(
        (i) => (providers[i] as Speech).synthesize(request, signal),
        () => !signal.aborted,
      ),
  }
}
