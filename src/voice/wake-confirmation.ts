import type { Clock, TimerHandle } from '../ports/clock.js'
import type { PhraseCheck } from '../ports/phrase-check.js'

/** The second opinions on a local wake: which phrases confirm it, and how long the model has. */
export interface WakeCheck {
  /**
   * Heard in the model's input transcription, any one confirms the wake (tolerant matching).
   * Empty: the model's transcription is not asked (the local check alone decides).
   */
  readonly phrases: readonly string[]
  /** From the first connection's open: the session ends without a word if none was heard. */
  readonly withinMs: number
  /**
   * The local check of the phrase on the pre-roll: until it agrees no microphone audio leaves
   * (MicUplink holds it); if it refuses, nothing is sent and the session ends unconfirmed.
   */
  readonly local?: PhraseCheck
  /** How much audio after the detection the local check hears too (MicUplink waits for it). */
  readonly localAfterMs?: number
  /**
   * Asked as each wake's session opens: whether the local check holds the audio this time. False:
   * it runs in shadow, beside the session, holding nothing (it has not earned the right to yet).
   * Absent: it always holds.
   */
  readonly localGates?: () => boolean
}

/**
 * What a transcription of "Hey Jarvis" looks like in the field: the greeting is often heard as
 * "hi" or "a". A household with its own phrase lists its own.
 */
export const DEFAULT_CONFIRM_PHRASES: readonly string[] = ['hey jarvis', 'hi jarvis', 'a jarvis']

/** The session's connect time plus the model's transcription delay, measured to about 1.5 s. */
export const DEFAULT_CONFIRM_WITHIN_MS = 1500

/** Lower case, letters and digits only, one space between words: "Hey, Jarvis!" → "hey jarvis". */
function normalizeSpeech(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
}

/** True when `transcript` contains one of `phrases` as whole words (spacing and case ignored). */
export function confirmsWake(transcript: string, phrases: readonly string[]): boolean {
  const heard = ` ${normalizeSpeech(transcript)} `
  return phrases.some((p) => {
    const want = normalizeSpeech(p)
    if (want === '') return false
    // "heyjarvis" written as one word is the same phrase.
    return heard.includes(` ${want} `) || heard.includes(` ${want.replace(/ /g, '')} `)
  })
}

/**
 * One session's second opinion: pending from the start, confirmed once the input transcription
 * so far contains a wake phrase, rejected when `withinMs` passes after `start()` without one.
 * Until then the session holds back everything the model does (its audio, its calls): a false
 * local wake costs a second of audio sent, never a word said or a tool run.
 */
export class WakeConfirmation {
  readonly #check: WakeCheck
  readonly #clock: Clock
  readonly #onDecided: (confirmed: boolean, heard: string) => void
  #heard = ''
  #state: 'pending' | 'confirmed' | 'rejected'
  #timer: TimerHandle | undefined

  constructor(
    check: WakeCheck,
    clock: Clock,
    onDecided: (confirmed: boolean, heard: string) => void,
  ) {
    this.#check = check
    this.#clock = clock
    this.#onDecided = onDecided
    // No phrase to wait for: only the local check was asked, and it holds the audio itself.
    this.#state = check.phrases.length === 0 ? 'confirmed' : 'pending'
  }

  get pending(): boolean {
    return this.#state === 'pending'
  }

  get confirmed(): boolean {
    return this.#state === 'confirmed'
  }

  /** The model can hear now: its time to confirm starts (called again on a reconnect: no-op). */
  start(): void {
    if (this.#state !== 'pending' || this.#timer) return
    this.#timer = this.#clock.setTimeout(() => this.#decide(false), this.#check.withinMs)
  }

  /** A piece of the model's input transcription. */
  heard(text: string): void {
    if (this.#state !== 'pending') return
    this.#heard += text
    if (confirmsWake(this.#heard, this.#check.phrases)) this.#decide(true)
  }

  stop(): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #decide(confirmed: boolean): void {
    if (this.#state !== 'pending') return
    this.stop()
    this.#state = confirmed ? 'confirmed' : 'rejected'
    this.#onDecided(confirmed, this.#heard)
  }
}
