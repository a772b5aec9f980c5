import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { loadOrCreateVapidKeys } from '../../src/adapters/webpush/vapid-key-file.js'
import { PhonePush } from '../../src/alerts/phone-push.js'
import { servePush } from '../../src/alerts/push-endpoint.js'
import type {
  ApprovalBroadcast,
  BroadcastEnding,
  BroadcastRequest,
} from '../../src/ports/approval-broadcast.js'
import type { PushOptions, PushResult, PushSender } from '../../src/ports/push.js'
import type { PushSubscription } from '../../src/ports/push-subscriptions.js'
import type { TestBroker } from '../helpers/brokers.js'
import { type PhoneWorld, phoneWorld } from '../phone/world.js'
import type { PushPhone } from './push-browser.js'

/**
 * The push service as far as a test can have one: below the PushSender port, what the device
 * would POST to the push service goes to the phone's browser through CDP, as the push service
 * would deliver it. Only endpoints the loopback GCM stand-in issued are served; any other is gone
 * (410), as a real push service says of an endpoint it does not know.
 */
class CdpPushService implements PushSender {
  phone: PushPhone | undefined
  /** The envelopes handed to the browser, in order (plaintext: the browser's decryption is skipped). */
  readonly delivered: string[] = []
  /** When each was handed over (performance.now()), for the benchmark. */
  readonly at: number[] = []

  constructor(readonly publicKey: string) {}

  async send(to: PushSubscription, payload: Uint8Array, _o: PushOptions): Promise<PushResult> {
    const phone = this.phone
    if (!phone?.gcm.tokens.some((t) => to.endpoint.endsWith(`/${t}`))) {
      return { kind: 'gone', status: 410 }
    }
    const text = Buffer.from(payload).toString('utf8')
    this.at.push(performance.now())
    this.delivered.push(text)
    await phone.deliver(text)
    return { kind: 'delivered', status: 201 }
  }
}

/** Passes the device's requests and endings on to Web Push once the world exists to hold it. */
class LateBroadcast implements ApprovalBroadcast {
  target: ApprovalBroadcast | undefined
  requested(r: BroadcastRequest): void {
    this.target?.requested(r)
  }
  ended(e: BroadcastEnding): void {
    this.target?.ended(e)
  }
}

/**
 * A phone world (test/phone/world.ts) with Web Push as the composition wires it: the device's
 * VAPID key, the push operations on the phones' request channel, PhonePush told every request and
 * ending, and the push service standing in through CDP (`attach` the phone once launched).
 */
export async function pushWorld(broker: TestBroker): Promise<
  PhoneWorld & {
    readonly vapidKey: string
    readonly service: CdpPushService
    readonly push: PhonePush
    attach(phone: PushPhone | undefined): void
  }
> {
  const relay = new LateBroadcast()
  const w = await phoneWorld(broker, { broadcast: relay })
  const dir = mkdtempSync(join(tmpdir(), 'nocturn-vapid-'))
  const vapid = loadOrCreateVapidKeys(join(dir, 'vapid-key.json'))
  const service = new CdpPushService(vapid.publicKey)
  const push = new PhonePush({
    subscriptions: w.store.push,
    sender: service,
    phones: () => w.keys,
    deviceId: w.deviceId,
    clock: realClock(),
    logger: w.logger,
  })
  relay.target = push
  servePush(w.endpoint, {
    subscriptions: w.store.push,
    vapidKey: vapid.publicKey,
    clock: realClock(),
  })
  const closeWorld = w.close
  return Object.assign(w, {
    vapidKey: vapid.publicKey,
    service,
    push,
    attach(phone: PushPhone | undefined) {
      service.phone = phone
    },
    async close() {
      push.close()
      await closeWorld()
      rmSync(dir, { recursive: true, force: true })
    },
  })
}
