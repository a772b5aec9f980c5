import { z } from 'zod'

/**
 * The speaker's own settings over MQTT (docs/protocol.md, "Speaker settings"): operations on the
 * phones' request topic, signed and answered exactly like the conversation operations.
 */
export const DEVICE_OPS = ['set_volume', 'set_sensitivity'] as const

export const deviceOpArgSchemas = {
  /** 0–100 %, a whole number; anything else is refused, not clamped. */
  set_volume: z.object({ volume: z.number() }),
  /** One of the three words (protocol/sensitivity.ts); anything else is refused. */
  set_sensitivity: z.object({ sensitivity: z.string().max(16) }),
} as const
