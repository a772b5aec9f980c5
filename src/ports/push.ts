import type { PushSubscription } from './push-subscriptions.js'

/**
 * PushSender: delivers one message to one Web Push subscription through its push service, encrypted
 * for that browser alone (RFC 8291) and signed with the device's VAPID key (RFC 8292). It never
 * throws: the result says whether the service took it, whether the subscription is gone for good,
 * or whether to try again later.
 */
export interface PushSender {
  send(to: PushSubscription, payload: Uint8Array, options: PushOptions): Promise<PushResult>
  /** The device's VAPID public key, base64url: the app's `applicationServerKey`. */
  readonly publicKey: string
}

export interface PushOptions {
  /** How long the push service may hold it for an offline phone (RFC 8030 TTL). */
  readonly ttlSeconds: number
  /** A later message with the same topic replaces this one while undelivered (RFC 8030 §5.4). */
  readonly topic?: string
  readonly urgency?: 'very-low' | 'low' | 'normal' | 'high'
}

export type PushResult =
  | { readonly kind: 'delivered'; readonly status: number }
  /** 404 or 410: the subscription expired or was unsubscribed; never push to it again. */
  | { readonly kind: 'gone'; readonly status: number }
  /** 429, 5xx or no answer: try again, not before `retryAfterMs` when the service said. */
  | {
      readonly kind: 'retry'
      readonly status?: number
      readonly retryAfterMs?: number
      readonly reason: string
    }
  /** Any other refusal (400, 403, 413): trying again would not help. */
  | { readonly kind: 'failed'; readonly status?: number; readonly reason: string }

/** The most a push may carry: 4096-byte record less its header, tag and delimiter, with room left. */
export const MAX_PUSH_PLAINTEXT = 3000
