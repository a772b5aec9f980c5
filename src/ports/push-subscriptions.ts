/**
 * PushSubscriptionStore: the Web Push subscriptions each paired phone registered (docs/protocol.md,
 * "Push"), kept so a request reaches a phone in a pocket after a restart too. One phone may have
 * several (two browsers); an endpoint is one subscription. Nothing here is secret to the device's
 * own files, but nothing of it is ever logged whole: an endpoint is a capability to push.
 */
export interface PushSubscriptionStore {
  /** Adds or replaces the subscription at `endpoint` for `phone`. */
  putPushSubscription(s: StoredPushSubscription): void
  /** True if it was there. */
  removePushSubscription(phone: string, endpoint: string): boolean
  /** Every subscription of `phone`, or every phone's when absent; oldest first. */
  pushSubscriptions(phone?: string): StoredPushSubscription[]
  /** Forgets every subscription of a phone (its pairing was revoked); how many went. */
  removePhonePushSubscriptions(phone: string): number
}

export interface PushSubscription {
  /** The push service's URL for this subscription (https in the wild). */
  readonly endpoint: string
  /** The browser's P-256 public key, base64url (65 bytes uncompressed). */
  readonly p256dh: string
  /** The browser's authentication secret, base64url (16 bytes). */
  readonly auth: string
}

export interface StoredPushSubscription extends PushSubscription {
  readonly phone: string
  readonly createdAt: number
}
