/**
 * Whether the model's own transcription heard the wake phrase (the second opinion): `yes`, `no`
 * (or the local check refused it), `not_asked` (no second opinion was configured, or the wake
 * talked over a reply), `pending` while the session runs.
 */
export type WakeConfirmed = 'yes' | 'no' | 'not_asked' | 'pending'

/**
 * The local check's verdict on a wake's phrase (docs/wake-word.md, "The local second opinion"):
 * whether it held the audio or ran in shadow beside the session.
 */
export type WakeLocalVerdict = 'agreed' | 'refused'

/** The one mark a phone gives a wake: it was not meant for the speaker (protocol/wake-ops.ts). */
export type WakeMark = 'not_me'

/** `wake`: the speaker woke; `missed`: the household said it missed them (no wake). */
export type WakeKind = 'wake' | 'missed'

export interface NewWake {
  readonly kind: WakeKind
  readonly at: number
  readonly phrase: string
  /** The score that counted (the verifier's where there is one), 0–1. */
  readonly score: number
  readonly confirmed: WakeConfirmed
  /** The head's input windows around it (each `window × 96` floats), never audio. */
  readonly windows: readonly Float32Array[]
}

export interface WakeEntry {
  readonly id: number
  readonly kind: WakeKind
  readonly at: number
  readonly phrase: string
  readonly score: number
  readonly confirmed: WakeConfirmed
  /** The first words the model heard, when it confirmed the wake. */
  readonly said?: string
  /** The local check's verdict; absent when it did not run (or could not). */
  readonly local?: WakeLocalVerdict
  readonly mark?: WakeMark
  /** The phone that marked it, and when. */
  readonly markedBy?: string
  readonly markedAt?: number
  /** How many windows of features it kept. */
  readonly windows: number
}

/** What a phrase's verifier learns from: the household's marks and its confirmed wakes. */
export interface WakeLesson {
  /** Windows of wakes marked "that wasn't me". */
  readonly negatives: Float32Array[]
  /** Windows of unmarked wakes the model confirmed, and of "it missed me" notes. */
  readonly positives: Float32Array[]
}

/** How much of it is kept: the newest `count` entries, none older than `maxAgeMs`. */
export interface WakeLogBounds {
  readonly count: number
  readonly maxAgeMs: number
}

/**
 * WakeLogStore: the speaker's recent wakes (docs/wake-word.md, "Teaching it"), bounded, in the
 * device's store. Features only — the embedding windows the head read — never audio.
 */
export interface WakeLogStore {
  /** Adds one, then drops what falls outside `bounds`. */
  addWake(wake: NewWake, bounds: WakeLogBounds): WakeEntry
  /** A wake's features, once the phrase has been scored past its end. */
  keepFeatures(id: number, windows: readonly Float32Array[]): void
  /** The second opinion's verdict, and the first words heard when it confirmed. */
  settleWake(id: number, confirmed: WakeConfirmed, said?: string): void
  /** The local check's verdict on the wake's phrase. */
  checkedLocally(id: number, verdict: WakeLocalVerdict): void
  markWake(id: number, mark: WakeMark, by: string, at: number): WakeEntry | undefined
  wake(id: number): WakeEntry | undefined
  /** Newest first. */
  wakes(page: { limit: number; before?: number }): WakeEntry[]
  lesson(phrase: string): WakeLesson
}
