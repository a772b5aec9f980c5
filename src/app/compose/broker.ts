import { readFileSync } from 'node:fs'
import { ConsoleApprover } from '../../adapters/console/console-approver.js'
import type { PhoneAppServer } from '../../adapters/http-static/phone-app-server.js'
import { createDeviceMqtt } from '../../adapters/mqtt/index.js'
import { PhoneRequests } from '../../adapters/mqtt/phone-requests.js'
import { serveSettings } from '../../adapters/mqtt/settings-endpoint.js'
import { servePush } from '../../alerts/push-endpoint.js'
import { askingWire } from '../../approvals/asking-wire.js'
import { broadcastListener } from '../../approvals/broadcast-listener.js'
import { ApprovalDesk } from '../../approvals/desk.js'
import { serveHistory } from '../../approvals/history-endpoint.js'
import { serveOwner } from '../../approvals/owner-endpoint.js'
import { approvalAnnouncer } from '../../conversations/approval-announcer.js'
import { createConversationEndpoint } from '../../conversations/conversation-endpoint.js'
import type { ConversationService } from '../../conversations/conversation-service.js'
import { serveGrants } from '../../conversations/grants-endpoint.js'
import { PhoneGrants } from '../../conversations/phone-grants.js'
import type { TranscriptFeed } from '../../conversations/transcript-feed.js'
import type { Gate } from '../../core/gate.js'
import { approvalTracker } from '../../device/approval-tracker.js'
import type { DeviceState } from '../../device/device-state.js'
import { serveWakes } from '../../device/wake-endpoint.js'
import type { WakeLog } from '../../device/wake-log.js'
import type { ApprovalHistory } from '../../ports/approval-history.js'
import type { OwnerCheck } from '../../ports/owner-check.js'
import type { OwnerCredentialStore } from '../../ports/owner-credentials.js'
import type { Publisher } from '../../ports/publisher.js'
import type { PushSubscriptionStore } from '../../ports/push-subscriptions.js'
import { listenMode } from '../config/schema.js'
import { phoneAppUrl, startPhoneApp } from '../phone-app.js'
import { PhoneKeyStore } from '../phone-keys.js'
import { composeAlerts, type PushSide } from './alerts.js'
import type { Composition } from './composition.js'
import { composeOwnerCheck } from './owner.js'

export type DeviceMqtt = ReturnType<typeof createDeviceMqtt>

/** The household side: who is asked to approve, where home actions are published, the phones. */
interface Household {
  /** The approval desk the gate asks; its listeners are registered here and in composeGate. */
  readonly approver: ApprovalDesk
  /** Where home actions and tool modules publish; only with a broker. */
  readonly publisher?: Publisher
  readonly mqtt?: DeviceMqtt
  readonly phoneKeys: PhoneKeyStore
  /** Web Push, when on: served on the phones' request channel. */
  readonly push?: PushSide
  /** The owner's yes: the approver asks it, the phones register with it. */
  readonly owner?: OwnerCheck
}

/** The terminal, for the console approver when there is no broker. */
export interface Terminal {
  readonly input?: NodeJS.ReadStream
  readonly output?: NodeJS.WriteStream
}

/**
 * The broker when one is configured: approvals on the paired phones, the status, the household's
 * devices. Without one, approvals are asked on the terminal, and denied when there is no terminal.
 * The connection is made later (`mqtt.connection.start()`): listening does not wait for the broker.
 */
export function composeHousehold(
  { config: c, clock, log, closers }: Composition,
  feed: TranscriptFeed,
  device: { readonly state: DeviceState; announce(text: string): void },
  terminal: Terminal,
  stores: { readonly push: PushSubscriptionStore; readonly owners: OwnerCredentialStore },
): Household {
  const phoneKeys = new PhoneKeyStore(c.phonesDir)
  if (!c.mqtt) {
    log.warn(
      { event: 'no_mqtt_configured' },
      'no mqtt configured: approvals are asked on the terminal, or denied',
    )
    const input = terminal.input ?? process.stdin
    const approver = new ConsoleApprover({
      input,
      output: terminal.output ?? process.stdout,
      interactive: input.isTTY === true,
      autoAnswer: 'deny',
    })
    const desk = new ApprovalDesk({ wire: askingWire(approver), clock, logger: log })
    desk.listen(approvalTracker(device.state))
    return { approver: desk, phoneKeys }
  }
  let connection: Publisher | undefined
  const alerts = composeAlerts(
    { config: c, clock, log, closers },
    { subscriptions: stores.push, phones: () => phoneKeys.keys(), publisher: () => connection },
  )
  const owner = composeOwnerCheck({ config: c, clock, log, closers }, stores.owners, () =>
    phoneKeys.keys(),
  )
  const mqtt = createDeviceMqtt({
    url: c.mqtt.url,
    deviceId: c.mqtt.deviceId,
    prefix: c.mqtt.prefix,
    ...(c.mqtt.username !== undefined && { username: c.mqtt.username }),
    ...(c.mqtt.password !== undefined && { password: c.mqtt.password }),
    ...(c.mqtt.ca !== undefined && { ca: readFileSync(c.mqtt.ca) }),
    ...(c.mqtt.cert !== undefined && { cert: readFileSync(c.mqtt.cert) }),
    ...(c.mqtt.key !== undefined && { key: readFileSync(c.mqtt.key) }),
    model: c.provider.model,
    phones: () => phoneKeys.keys(),
    audience: audienceOf(phoneKeys.list().map((p) => p.name)),
    logger: log.child({ component: 'mqtt' }),
    clock,
    connect: false,
    device: device.state,
    ...(c.mqtt.homeAssistant && {
      homeAssistant: {
        discovery: c.mqtt.homeAssistant.discovery,
        ...(c.mqtt.homeAssistant.name !== undefined && { name: c.mqtt.homeAssistant.name }),
        discoveryPrefix: c.mqtt.homeAssistant.discoveryPrefix,
        ...(c.phoneApp.enabled && { configurationUrl: phoneAppUrl(c) }),
        // Only a wake word has a sensitivity: in speech or button mode the select would do nothing.
        sensitivity: listenMode(c.listen) === 'wake',
        announce: (text: string) => device.announce(text),
      },
    }),
  })
  connection = mqtt.connection
  closers.add(() => mqtt.close())
  const desk = new ApprovalDesk({
    wire: mqtt.approver,
    clock,
    logger: log,
    selfApproval: c.mqtt.selfApproval,
    owner,
  })
  // Withdrawn before the connection closes (closers run in reverse), so the phones hear it.
  closers.add(() => desk.withdrawAll())
  desk.listen(approvalTracker(device.state))
  // Followers on a phone see approvals come and go next to the messages.
  desk.listen(approvalAnnouncer(feed))
  if (alerts.broadcast) desk.listen(broadcastListener(alerts.broadcast))
  return {
    approver: desk,
    publisher: mqtt.connection,
    mqtt,
    phoneKeys,
    ...(alerts.push && { push: alerts.push }),
    owner,
  }
}

interface PhoneSideDeps {
  readonly household: Household
  readonly conversations: ConversationService
  readonly gate: Gate
  readonly feed: TranscriptFeed
  readonly device: DeviceState
  /** Every approval's ending, for the phones' History. */
  readonly history: ApprovalHistory
  /** The speaker's recent wakes, listed and marked from the phones (wake mode). */
  readonly wakes?: WakeLog | undefined
}

/**
 * What the phones talk to: their request channel on the broker, with the conversation endpoint
 * (typed messages, follows), the grants and the approval history on it; and the household phone app's static
 * files and /config.json (the app talks to the broker itself).
 */
export async function servePhones(
  comp: Composition,
  { household, conversations, gate, feed, device, history, wakes }: PhoneSideDeps,
): Promise<PhoneAppServer | undefined> {
  const { config: c, clock, log, closers } = comp
  if (household.mqtt && c.mqtt) {
    const requests = new PhoneRequests({
      connection: household.mqtt.connection,
      phones: () => household.phoneKeys.keys(),
      deviceId: c.mqtt.deviceId,
      prefix: c.mqtt.prefix,
      logger: log.child({ component: 'conversations-mqtt' }),
      clock,
      onRefused: (reason) => device.refused('requests', reason),
    })
    // Closed before the broker connection (closers run in reverse).
    closers.add(() => requests.close())
    const endpoint = createConversationEndpoint({ requests, service: conversations, feed, clock })
    closers.add(() => endpoint.close())
    serveGrants(
      requests,
      new PhoneGrants({ grants: gate.grants, clock, logger: log.child({ component: 'grants' }) }),
    )
    serveHistory(requests, history)
    if (household.push) servePush(requests, { ...household.push, clock })
    serveSettings(requests, device, {
      wakeWord: listenMode(c.listen) === 'wake',
      logger: log.child({ component: 'settings-mqtt' }),
    })
    if (household.owner) serveOwner(requests, household.owner)
    if (wakes) serveWakes(requests, wakes)
  }
  const phoneApp = await startPhoneApp(c, log.child({ component: 'phone-app' }), {
    // Not served (its port taken): on the LED and in the status, with the fix.
    onNotServed: (reason) => device.fault('phone app', reason),
  })
  if (phoneApp) closers.add(() => phoneApp.close())
  return phoneApp
}

/** Who the model says it is waiting for: the one paired phone by name, or "your phones". */
function audienceOf(names: readonly string[]): string {
  if (names.length === 1 && names[0]) return names[0]
  return names.length === 0 ? 'your phone' : 'your phones'
}
