import { NocturnError } from '../core/errors.js'
import type { Clock } from '../ports/clock.js'
import type { PhoneRequestChannel } from '../ports/phone-requests.js'
import type { PushSubscriptionStore } from '../ports/push-subscriptions.js'
import { args } from '../protocol/op-args.js'
import { pushOpArgSchemas } from '../protocol/push-ops.js'

/** A phone with more browsers than this loses its oldest subscription: the store stays small. */
const MAX_SUBSCRIPTIONS_PER_PHONE = 8

export interface PushEndpointOptions {
  readonly subscriptions: PushSubscriptionStore
  /** The device's VAPID public key (base64url), the app's `applicationServerKey`. */
  readonly vapidKey: string
  readonly clock: Clock
  /** URL schemes a push service may have: https only, unless a test serves one on loopback. */
  readonly schemes?: readonly string[]
}

/**
 * Web Push subscriptions over MQTT (docs/protocol.md "Push to a phone in a pocket"): a paired
 * phone asks for the device's VAPID key (the answer signed with its key, so the app knows it came
 * from its speaker), registers the subscription its browser made, and takes it back — each a
 * signed request on the phones' request channel, verified before anything is stored.
 */
export function servePush(requests: PhoneRequestChannel, o: PushEndpointOptions): void {
  const schemes = o.schemes ?? ['https:']
  requests.serve({
    push_key: (ask) => {
      args(pushOpArgSchemas.push_key, ask.request.args)
      ask.reply('done', { vapidKey: o.vapidKey })
    },
    push_subscribe: (ask) => {
      const a = args(pushOpArgSchemas.push_subscribe, ask.request.args)
      checkEndpoint(a.endpoint, schemes)
      if (Buffer.from(a.keys.p256dh, 'base64url').length !== 65) {
        throw bad('keys.p256dh: expected the 65-byte P-256 public key, base64url')
      }
      if (Buffer.from(a.keys.auth, 'base64url').length < 16) {
        throw bad('keys.auth: expected the 16-byte authentication secret, base64url')
      }
      const phone = ask.request.phone
      o.subscriptions.putPushSubscription({
        phone,
        endpoint: a.endpoint,
        p256dh: a.keys.p256dh,
        auth: a.keys.auth,
        createdAt: o.clock.now(),
      })
      const mine = o.subscriptions.pushSubscriptions(phone)
      for (const old of mine.slice(0, Math.max(0, mine.length - MAX_SUBSCRIPTIONS_PER_PHONE))) {
        o.subscriptions.removePushSubscription(phone, old.endpoint)
      }
      ask.reply('done', { subscribed: true })
    },
    push_unsubscribe: (ask) => {
      const a = args(pushOpArgSchemas.push_unsubscribe, ask.request.args)
      const removed = o.subscriptions.removePushSubscription(ask.request.phone, a.endpoint)
      ask.reply('done', { unsubscribed: removed })
    },
  })
}

function checkEndpoint(endpoint: string, schemes: readonly string[]): void {
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    throw bad('endpoint: not a URL')
  }
  if (!schemes.includes(url.protocol) || url.username !== '' || url.password !== '') {
    throw bad(`endpoint: expected a push service URL (${schemes.join(' or ')}), without a user`)
  }
}

function bad(message: string): NocturnError {
  return new NocturnError('NOC_ERR_BAD_REQUEST', message)
}
