import { z } from 'zod'

/**
 * The household teaches its speaker (docs/protocol.md, "Wakes"): three more operations on the
 * phones' request channel, signed and answered like the others. A phone lists the speaker's
 * recent wakes, marks one "that wasn't me", or notes "it missed me just now".
 */
export const WAKE_OPS = ['wakes', 'mark_wake', 'missed_wake'] as const

export const wakeOpArgSchemas = {
  /** Newest first; `before` (a wake's id) continues after it. */
  wakes: z.object({ limit: z.number().optional(), before: z.number().optional() }),
  /** The one mark there is: the wake was not meant for the speaker. */
  mark_wake: z.object({ wake: z.number(), mark: z.string().max(16) }),
  missed_wake: z.object({}),
} as const

/** What a phone may mark a wake as; anything else is refused. */
export const WAKE_MARKS = ['not_me'] as const
export type WakeMark = (typeof WAKE_MARKS)[number]

export function isWakeMark(s: string): s is WakeMark {
  return (WAKE_MARKS as readonly string[]).includes(s)
}
