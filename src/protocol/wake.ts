import { z } from 'zod'
import { PROTOCOL_VERSION } from './limits.js'
import { ID_PATTERN } from './topics.js'

/**
 * Wake claims (docs/protocol.md, "Several speakers in one home"): what a speaker that heard its
 * wake phrase tells the others, and the rule every speaker applies to decide, from the same
 * numbers, which one answers.
 */

/** A claim is about 100 bytes; anything longer is refused before it is parsed. */
export const MAX_CLAIM_BYTES = 512

/** The quietest level a claim can carry (digital silence is −∞, which JSON cannot say). */
const MIN_CLAIM_LEVEL_DB = -120

export const wakeClaimSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  device: z.string().regex(ID_PATTERN),
  /** Fresh per claim, so a speaker knows its own claim when the broker hands it back. */
  id: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/),
  /** How loud this speaker heard the wake, whole dBFS. */
  level: z.number().int().min(MIN_CLAIM_LEVEL_DB).max(0),
  /** The detector's score, 0–1, to three decimals. */
  score: z.number().min(0).max(1),
  /** The sender's wall clock when it claimed (for logs: no speaker trusts another's clock). */
  at: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  /**
   * How long, in ms, the round this claim opens lasts for its sender (its measured window); every
   * speaker times a round by the window of the claim that opened it. Absent (an older speaker):
   * the default window.
   */
  window: z.number().int().min(1).max(2000).optional(),
  /**
   * The sender is in a session and the wake was said over it (a barge-in): it has taken it at once,
   * and the claim only tells the others to yield. Absent (an older speaker): an ordinary claim.
   */
  answering: z.literal(true).optional(),
})
export type WakeClaim = z.infer<typeof wakeClaimSchema>

/**
 * The claim's numbers as they go on the wire. Both sides compare exactly these (a speaker ranks its
 * own claim by what it sent, not by what it measured), so they cannot disagree by a rounding.
 */
export function claimNumbers(levelDb: number, score: number): { level: number; score: number } {
  const level = Number.isFinite(levelDb)
    ? Math.min(0, Math.max(MIN_CLAIM_LEVEL_DB, Math.round(levelDb)))
    : MIN_CLAIM_LEVEL_DB
  const s = Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 0
  // `+ 0` turns a rounded -0 into 0, which JSON would write as 0 anyway.
  return { level: level + 0, score: Math.round(s * 1000) / 1000 }
}

/**
 * Whether claim `a` outranks `b`: the speaker already in a session (the person was talking to it),
 * then the louder (1 dB steps: nearer the person who spoke), then the surer, then the device id
 * that sorts first (UTF-16 code units), so two different speakers are always ordered. A device
 * never outranks itself.
 */
export function outranks(
  a: Pick<WakeClaim, 'device' | 'level' | 'score' | 'answering'>,
  b: Pick<WakeClaim, 'device' | 'level' | 'score' | 'answering'>,
): boolean {
  if ((a.answering === true) !== (b.answering === true)) return a.answering === true
  if (a.level !== b.level) return a.level > b.level
  if (a.score !== b.score) return a.score > b.score
  return a.device < b.device
}
