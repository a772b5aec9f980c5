import { createHash } from 'node:crypto'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Persona } from '../core/persona.js'
import type { UnreachableReason } from '../ports/provider-listener.js'
import type { SentenceStore } from '../ports/sentence-store.js'
import type { Speech, SpeechAudio } from '../ports/speech.js'
import { troublePcm } from '../tools/chime.js'
import { atRate } from './pcm-rate.js'
import { englishOf, WHY_REASONS, WHY_SENTENCES } from './why-sentences.js'

/** Where a sentence's audio came from: a provider's speech (kept), espeak-ng, or the tone. */
export type WhySource = 'provider' | 'local' | 'tone'

export interface WhyAudioOptions {
  readonly store: SentenceStore
  /** A provider's own speech, by the provider's name; undefined: it has none to make them with. */
  readonly speechFor: (provider: string) => Speech | undefined
  /** The voice on the device itself (espeak-ng), before any provider made the sentences. */
  readonly local?: Speech | undefined
  readonly persona: Persona
  /** The speaker's rate: every sentence is handed over at it. */
  readonly rateHz: number
  readonly logger: Logger
}

/**
 * The audio of each "why" sentence (why-sentences.ts): made by a provider's own speech while it
 * can be reached, kept in the store and reused; before any was made, the local voice; without
 * one, a tone — never silence. A kept sentence's name holds its provider, its reason and a hash of
 * its voice, language and words, so a new persona or a new wording is made again.
 */
export class WhyAudio {
  readonly #o: WhyAudioOptions
  readonly #log: Logger
  readonly #persona: Persona
  /** Providers whose sentences are all kept, or being made now. */
  readonly #made = new Set<string>()
  readonly #closed = new AbortController()

  constructor(options: WhyAudioOptions) {
    this.#o = options
    this.#log = options.logger.child({ component: 'why-audio' })
    this.#persona = { ...options.persona, language: englishOf(options.persona.language) }
  }

  /**
   * The sentence for `reason` at the speaker's rate: the first of `providers` that made it, else
   * the local voice's, else the tone.
   */
  async audio(
    reason: UnreachableReason,
    providers: readonly string[],
    signal: AbortSignal,
  ): Promise<{ pcm: Uint8Array; source: WhySource; provider?: string }> {
    for (const provider of providers) {
      const kept = await this.#o.store.read(this.#name(provider, reason))
      if (kept) return { pcm: this.#atRate(kept), source: 'provider', provider }
    }
    if (this.#o.local) {
      try {
        const said = await this.#o.local.synthesize(
          { text: WHY_SENTENCES[reason], persona: this.#persona },
          signal,
        )
        return { pcm: this.#atRate(said), source: 'local' }
      } catch (err) {
        if (signal.aborted) throw err
        this.#log.warn(
          { event: 'why_local_voice_failed', err: errorText(err) },
          'the local voice could not say why: playing the tone',
        )
      }
    }
    return { pcm: troublePcm(this.#o.rateHz), source: 'tone' }
  }

  /**
   * `provider` was reached: the sentences it has not made yet are made now with its speech, one
   * after another, in the background. Once per provider while this runs; a failure is logged and
   * tried again at its next session.
   */
  make(provider: string): void {
    const speech = this.#o.speechFor(provider)
    if (!speech || this.#made.has(provider) || this.#closed.signal.aborted) return
    this.#made.add(provider)
    void this.#makeAll(provider, speech).catch((err: unknown) => {
      this.#made.delete(provider)
      if (this.#closed.signal.aborted) return
      this.#log.warn(
        { event: 'why_sentences_not_made', provider, err: errorText(err) },
        'the spoken why sentences were not made: tried again at the next session',
      )
    })
  }

  close(): void {
    this.#closed.abort()
  }

  async #makeAll(provider: string, speech: Speech): Promise<void> {
    let made = 0
    for (const reason of WHY_REASONS) {
      const name = this.#name(provider, reason)
      if (await this.#o.store.read(name)) continue
      const audio = await speech.synthesize(
        { text: WHY_SENTENCES[reason], persona: this.#persona },
        this.#closed.signal,
      )
      await this.#o.store.write(name, audio)
      made++
    }
    if (made > 0) this.#log.info({ provider, made }, 'spoken why sentences made and kept')
  }

  #name(provider: string, reason: UnreachableReason): string {
    const { voice, language } = this.#persona
    const hash = createHash('sha256')
      .update(JSON.stringify([voice, language, WHY_SENTENCES[reason]]))
      .digest('hex')
      .slice(0, 12)
    return `${provider.replace(/[^A-Za-z0-9]/g, '-')}-${reason.replace('_', '-')}-${hash}`
  }

  #atRate(audio: SpeechAudio): Uint8Array {
    return atRate(audio.pcm, audio.sampleRateHz, this.#o.rateHz)
  }
}
