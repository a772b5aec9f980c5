import { z } from 'zod'

/**
 * Web Push over MQTT (protocol v1, docs/protocol.md "Push to a phone in a pocket"): three more
 * operations on the phones' request channel, signed and answered like the conversation ones. A
 * phone asks for the device's VAPID key, registers the subscription its browser made with it, and
 * takes it back; the device then pushes each request to it, encrypted for that browser alone.
 */
export const PUSH_OPS = ['push_key', 'push_subscribe', 'push_unsubscribe'] as const

/** A push service URL: https in the wild; the length keeps junk out of the store. */
const endpoint = z.string().min(1).max(2048)
const b64url = z.string().regex(/^[A-Za-z0-9_-]+$/)

/** The subscription as the browser's `PushSubscription.toJSON()` gives it. */
export const pushOpArgSchemas = {
  push_key: z.object({}),
  push_subscribe: z.object({
    endpoint,
    keys: z.object({ p256dh: b64url.max(100), auth: b64url.max(100) }),
  }),
  push_unsubscribe: z.object({ endpoint }),
} as const

/**
 * What one push carries (docs/protocol.md): `request` and `outcome` hold one message of the broker
 * exactly as it was published there, byte for byte, so a service worker verifies it with the
 * phone's key as the app would; `open` (a request too large for a push) only names the request.
 */
export type PushKind = 'request' | 'outcome' | 'open'

export function pushEnvelope(p: {
  kind: PushKind
  device: string
  id: string
  topic: string
  /** The published JSON text, embedded as it is. */
  message?: string
}): string {
  const head = JSON.stringify({ v: 1, kind: p.kind, device: p.device, id: p.id, topic: p.topic })
  return p.message === undefined ? head : `${head.slice(0, -1)},"message":${p.message}}`
}
