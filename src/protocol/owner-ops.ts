import { z } from 'zod'

/**
 * The owner's yes over MQTT (protocol v1, docs/protocol.md "The owner's yes"): two operations on
 * the phones' request channel, signed and answered like the others. `owner_status` says whether
 * the phone has a WebAuthn credential registered with this speaker and hands out a fresh
 * registration challenge; `owner_register` registers the credential the browser made over it.
 */
export const OWNER_OPS = ['owner_status', 'owner_register'] as const

/** base64url of WebAuthn's binary fields; the caps keep a request under the 16 KiB limit. */
const b64url = (max: number) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]*$/)
    .max(max)

/** What every `PublicKeyCredential` as JSON (WebAuthn L3 `toJSON`) carries, made or used. */
const credential = <R extends z.ZodRawShape>(response: R) =>
  z.object({
    id: b64url(1024).min(1),
    rawId: b64url(1024).min(1),
    type: z.literal('public-key'),
    response: z.object({ clientDataJSON: b64url(4096), ...response }),
    authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
    clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  })

/** A credential from `navigator.credentials.create()`. */
export const ownerRegistrationSchema = credential({
  attestationObject: b64url(8192),
  transports: z.array(z.string().max(32)).max(8).optional(),
})

export const ownerOpArgSchemas = {
  owner_status: z.object({}),
  /** The credential's shape is the owner check's to judge, so its refusal can say what is wrong. */
  owner_register: z.object({ credential: z.unknown() }),
} as const

/**
 * The `owner` field of a decision: a credential from `navigator.credentials.get()`. Checked only for a critical approve, and only after the decision's MAC verified.
 */
export const ownerAssertionSchema = credential({
  authenticatorData: b64url(4096),
  signature: b64url(1024),
  userHandle: b64url(1024).optional(),
})
