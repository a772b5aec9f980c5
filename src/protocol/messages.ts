import { z } from 'zod'
import { MAX_PAYLOAD_BYTES, PROTOCOL_VERSION } from './limits.js'
import { OUTCOME_STATES, type VerifiedRequest } from './phone-side.js'
import { SENSITIVITIES } from './sensitivity.js'
import { ID_PATTERN } from './topics.js'

/**
 * Protocol v1 payloads the device reads, as zod schemas (a phone checks with phone-side.ts). Unknown fields
 * are ignored (zod strips them); anything else that does not fit is rejected by the reader.
 */
const id = z.string().regex(ID_PATTERN)
const hex64 = z.string().regex(/^[0-9a-f]{64}$/)
const time = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)

const grantSchema = z.union([z.literal('once'), z.literal('session'), z.object({ until: time })])
export type Grant = z.infer<typeof grantSchema>

/** What the request digest covers: the request without `digest` and `macs` (the device builds it). */
export type RequestBody = Omit<VerifiedRequest, 'digest' | 'macs'>

export const decisionSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  id,
  decision: z.enum(['approve', 'deny']),
  grant: grantSchema,
  phone: id,
  at: time,
  /** Fresh per decision; at least 16 characters so a phone cannot reuse a short counter. */
  nonce: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
  /** Over the digest of the request the phone verified; the digest itself is not sent back. */
  mac: hex64,
  /**
   * The owner's WebAuthn assertion (docs/protocol.md, "The owner's yes"), as received: only a
   * critical approve needs one, and the owner check reads it (protocol/owner-ops.ts).
   */
  owner: z.unknown().optional(),
})

export const outcomeSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  id,
  state: z.enum(OUTCOME_STATES),
  by: id.optional(),
  /** Only on `approved`: what the device remembered (a critical tool: always "once"). */
  grant: grantSchema.optional(),
  at: time,
  /**
   * One outcome MAC per paired phone (docs/protocol.md, "Outcome MAC"). Optional in the schema so
   * an old device's outcome still parses; a phone shows an ending only when its own MAC verifies.
   */
  macs: z.record(id, hex64).optional(),
})
export type OutcomeMessage = z.infer<typeof outcomeSchema>

const refusalCounts = z.record(z.string().max(64), z.number().int().min(0))

/** Why a provider could not be reached, as the status carries it (ports/provider-listener.ts). */
const PROVIDER_PROBLEMS = [
  'offline',
  'timeout',
  'key_refused',
  'quota',
  'refused',
  'service_error',
] as const

const providerHealth = z.object({
  provider: z.string().min(1).max(64),
  ok: z.boolean(),
  reason: z.enum(PROVIDER_PROBLEMS).optional(),
  detail: z.string().max(300).optional(),
})

const statusSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  online: z.boolean(),
  state: z.string().max(64),
  /** Null in the last will: the broker sends it later, when the device can no longer say. */
  muted: z.boolean().nullable(),
  model: z.string().max(128).nullable(),
  since: time.nullable(),
  /** Why the state is `error`, in one line; absent when all is well. */
  reason: z.string().max(300).optional(),
  /** Local wakes the model's transcription did not confirm since the device started; absent: none. */
  falseWakes: z.number().int().min(0).optional(),
  /** The speaker's volume, 0–100 %; absent from a device older than it (and from the last will). */
  volume: z.number().int().min(0).max(100).optional(),
  /** The wake word's sensitivity; absent when the speaker listens without one (or is older). */
  sensitivity: z.enum(SENSITIVITIES).optional(),
  /**
   * Refused input since the device started, by where it came in and why (docs/protocol.md,
   * "Status"); absent: none.
   */
  refused: z
    .object({
      decisions: refusalCounts.optional(),
      requests: refusalCounts.optional(),
      wake_claims: refusalCounts.optional(),
    })
    .optional(),
  /**
   * Each live provider tried since the device started, in the order first tried: whether its last
   * attempt opened a session, and if not why (docs/protocol.md, "Status"); absent: none tried yet.
   */
  providers: z.array(providerHealth).max(8).optional(),
  /**
   * The local wake check (docs/wake-word.md, "The local second opinion"): `off` and `why`,
   * `shadow` (`streak` of `of` confirmed wakes agreed), `on` (configured), `earned`; `kept`: wakes
   * it refused that the model did not confirm. Absent: no wake word, or an older device.
   */
  wakeCheck: z
    .object({
      state: z.enum(['off', 'shadow', 'on', 'earned']),
      why: z.string().max(300).optional(),
      streak: z.number().int().min(0).optional(),
      of: z.number().int().min(1).optional(),
      kept: z.number().int().min(0).optional(),
    })
    .optional(),
})
export type StatusMessage = z.infer<typeof statusSchema>

export type ParseResult<T> =
  | { ok: true; value: T; raw: Record<string, unknown> }
  | { ok: false; reason: 'oversized' | 'malformed-json' | 'invalid-payload'; detail?: string }

/**
 * Reads one payload: size first (before any parsing), then JSON, then the schema. `raw` is the
 * parsed JSON object as received, which the request digest is computed over.
 */
export function parsePayload<T>(schema: z.ZodType<T>, payload: Uint8Array): ParseResult<T> {
  if (payload.byteLength > MAX_PAYLOAD_BYTES) return { ok: false, reason: 'oversized' }
  let json: unknown
  try {
    // A view on the same bytes, not a copy (this runs for every message, junk included).
    const bytes = Buffer.isBuffer(payload)
      ? payload
      : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)
    json = JSON.parse(bytes.toString('utf8'))
  } catch {
    return { ok: false, reason: 'malformed-json' }
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return { ok: false, reason: 'invalid-payload', detail: 'not an object' }
  }
  const r = schema.safeParse(json)
  if (!r.success) {
    const detail = r.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ')
    return { ok: false, reason: 'invalid-payload', detail }
  }
  return { ok: true, value: r.data, raw: json as Record<string, unknown> }
}
