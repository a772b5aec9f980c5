/** What the local check made of the audio before a wake. */
export interface PhraseVerdict {
  /** One of the wake phrases is in the audio. */
  readonly agreed: boolean
  /** What it heard of the phrases (empty when it heard none of them). */
  readonly heard: readonly string[]
  /** How long the check took, wall time. */
  readonly ms: number
}

/**
 * PhraseCheck: a second opinion on the device. When the wake word's head fires, the audio that
 * made it fire (the pre-roll) is checked for the phrase itself by another recogniser before any
 * of it may leave the room. `check` rejects only when the recogniser could not run at all.
 */
export interface PhraseCheck {
  /** `pcm`: 16 kHz mono signed 16-bit little-endian, the phrase in it. */
  check(pcm: Uint8Array): Promise<PhraseVerdict>
  close(): Promise<void>
}
