import { dirname, join } from 'node:path'
import { HomeAssistantAlerts } from '../../adapters/mqtt/home-assistant/alert-topic.js'
import { haTopicsFor } from '../../adapters/mqtt/home-assistant/discovery.js'
import { NtfyAlerter } from '../../adapters/ntfy/ntfy-alerter.js'
import { loadOrCreateVapidKeys } from '../../adapters/webpush/vapid-key-file.js'
import { WebPushSender } from '../../adapters/webpush/web-push-sender.js'
import { ApprovalAlerts, broadcastAll } from '../../alerts/approval-alerts.js'
import { PhonePush } from '../../alerts/phone-push.js'
import type { Alerter } from '../../ports/alert.js'
import type { ApprovalBroadcast } from '../../ports/approval-broadcast.js'
import type { Publisher } from '../../ports/publisher.js'
import type { PushSubscriptionStore } from '../../ports/push-subscriptions.js'
import { topicsFor } from '../../protocol/index.js'
import { cardLink, phoneAppUrl } from '../phone-app.js'
import type { Composition } from './composition.js'

/** What the phones' request channel serves for Web Push: the key and where subscriptions go. */
export interface PushSide {
  readonly vapidKey: string
  readonly subscriptions: PushSubscriptionStore
}

export interface Alerts {
  readonly broadcast?: ApprovalBroadcast
  readonly push?: PushSide
}

/**
 * How an approval reaches a phone that is not looking at the app (`alerts` in the config): Web Push
 * to every subscribed phone, and the alert channels the household configured. `publisher` is the
 * broker connection once it exists (the Home Assistant alert goes over it).
 */
export function composeAlerts(
  { config: c, clock, log, closers }: Composition,
  deps: {
    readonly subscriptions: PushSubscriptionStore
    readonly phones: () => ReadonlyMap<string, unknown>
    readonly publisher: () => Publisher | undefined
  },
): Alerts {
  if (!c.mqtt) return {}
  const deviceId = c.mqtt.deviceId
  const appUrl = phoneAppUrl(c)
  const parts: ApprovalBroadcast[] = []
  let push: PushSide | undefined
  const w = c.alerts.webPush
  if (w.enabled) {
    const keys = loadOrCreateVapidKeys(w.keyFile ?? join(dirname(c.phonesDir), 'vapid-key.json'))
    const sender = new WebPushSender({ keys, subject: w.subject ?? vapidSubjectOf(appUrl) })
    const phonePush = new PhonePush({
      subscriptions: deps.subscriptions,
      sender,
      phones: deps.phones,
      deviceId,
      clock,
      logger: log,
    })
    // A phone revoked while the device was stopped is forgotten at once.
    phonePush.prune()
    closers.add(() => phonePush.close())
    parts.push(phonePush)
    push = { vapidKey: keys.publicKey, subscriptions: deps.subscriptions }
  }
  const alerters: Alerter[] = []
  const n = c.alerts.ntfy
  if (n) {
    alerters.push(
      new NtfyAlerter({
        server: n.server,
        topic: n.topic,
        ...(n.token !== undefined && { token: n.token }),
      }),
    )
  }
  if (c.alerts.homeAssistant) {
    const base = topicsFor(c.mqtt.prefix, deviceId).base
    const topic = haTopicsFor(
      c.mqtt.homeAssistant?.discoveryPrefix ?? 'homeassistant',
      base,
      deviceId,
    ).alert
    alerters.push(
      new HomeAssistantAlerts(
        {
          publish: (t, payload, o) => {
            const p = deps.publisher()
            if (!p) return Promise.reject(new Error('the broker connection is not made yet'))
            return p.publish(t, payload, o)
          },
        },
        topic,
      ),
    )
  }
  if (alerters.length > 0) {
    parts.push(
      new ApprovalAlerts({
        alerters,
        deviceId,
        cardUrl: (id) => cardLink(appUrl, deviceId, id),
        logger: log,
      }),
    )
  }
  return {
    ...(parts.length > 0 && { broadcast: broadcastAll(parts) }),
    ...(push && { push }),
  }
}

/** RFC 8292 wants a contact: the app's own address, as https (a push service rejects http). */
function vapidSubjectOf(appUrl: string): string {
  return appUrl.replace(/^http:/, 'https:')
}
