import type { LLM, LLMAnswer, LLMRequest } from '../ports/llm.js'
import type { Speech, SpeechAudio, SpeechRequest } from '../ports/speech.js'
import type { ProviderOrder } from './provider-order.js'

/**
 * Typed turns in the live failover's order: a provider resting after a failed session is skipped,
 * and a turn that fails goes to the next provider — unless text already streamed to the phone
 * (the next one would say it again) or the caller gave up (docs/voice-driver.md, "Failover").
 */
export class FailoverLLM implements LLM {
  readonly #providers: readonly LLM[]
  readonly #order: ProviderOrder

  constructor(providers: readonly LLM[], order: ProviderOrder) {
    this.#providers = providers
    this.#order = order
  }

  next(request: LLMRequest, signal: AbortSignal): Promise<LLMAnswer> {
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
    return this.#order.quietly(
      (i) => (this.#providers[i] as LLM).next(watched, signal),
      () => !streamed && !signal.aborted,
    )
  }
}

/** Announcements said in the same order: the first provider that is not resting and can speak. */
export class FailoverSpeech implements Speech {
  readonly #providers: readonly Speech[]
  readonly #order: ProviderOrder

  constructor(providers: readonly Speech[], order: ProviderOrder) {
    this.#providers = providers
    this.#order = order
  }

  synthesize(request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio> {
    return this.#order.quietly(
      (i) => (this.#providers[i] as Speech).synthesize(request, signal),
      () => !signal.aborted,
    )
  }
}
