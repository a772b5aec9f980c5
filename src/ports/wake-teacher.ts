import type { WakeLesson } from './wake-log.js'

/** What a re-training did: learnt, or why not. */
export type TeachOutcome =
  | {
      readonly learnt: true
      readonly negatives: number
      readonly positives: number
      /** Of the marked windows, how many the new verifier scores under the threshold. */
      readonly refused: number
      /** Windows of the household's phrase in noise the new verifier was held to accept. */
      readonly guarded?: number
      readonly cpuMs: number
    }
  | { readonly learnt: false; readonly why: string }

/** The windows the head read around one moment: a wake's features, never audio. */
export interface HeardWindows {
  readonly phrase: string
  /** The head's score there (for a missed wake: the best one heard). */
  readonly score: number
  readonly windows: Float32Array[]
}

/**
 * WakeTeacher: the household verifier as the running detector uses it, for the wake log
 * (docs/wake-word.md, "Teaching it"): the features of a wake just told, the best-scoring moment of
 * the last seconds (a wake it missed), and re-training on the household's marks.
 */
export interface WakeTeacher {
  /**
   * The windows of `phrase` scored between two moments (wall clock, ms) that the head scored
   * highest: a wake's features, read once the phrase has been scored past its end.
   */
  windowsAround(phrase: string, fromMs: number, toMs: number): Float32Array[]
  /** The best-scoring windows of any phrase in the last few seconds, if any were scored. */
  bestRecent(): HeardWindows | undefined
  /** Re-trains `phrase`'s verifier on `lesson`; it scores with the new one from the next chunk. */
  teach(phrase: string, lesson: WakeLesson): Promise<TeachOutcome>
}
