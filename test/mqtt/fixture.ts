import { randomBytes, randomUUID } from 'node:crypto'
import mqtt, { type MqttClient } from 'mqtt'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { createDeviceMqtt } from '../../src/adapters/mqtt/index.js'
import { SqliteStore } from '../../src/adapters/sqlite/sqlite-store.js'
import { showStatus } from '../../src/app/compose/device.js'
import { Gate } from '../../src/core/gate.js'
import { Grants } from '../../src/core/grants.js'
import type { Logger } from '../../src/core/logger.js'
import type { CallContext, Tool } from '../../src/core/types.js'
import { approvalTracker } from '../../src/device/approval-tracker.js'
import { DeviceState } from '../../src/device/device-state.js'
import { PhoneClient } from '../../src/phone/client.js'
import type { ApprovalDecision, ApprovalRequest, Approver } from '../../src/ports/approver.js'
import type { Clock } from '../../src/ports/clock.js'
import type { Pairing } from '../../src/protocol/index.js'
import { PREFIX, type TestBroker, USERS } from '../helpers/brokers.js'
import { testDesk, testPairing, testPhoneLink } from '../helpers/device-mqtt.js'
import { until } from '../helpers/wait.js'

export interface LogEntry {
  level: string
  fields: Record<string, unknown>
  msg: string | undefined
}

/** A logger that keeps every line, so tests can check what was said (and what never was). */
export function captureLogger(entries: LogEntry[] = [], bindings: Record<string, unknown> = {}) {
  const at =
    (level: string) =>
    (fields: object, msg?: string): void => {
      entries.push({ level, fields: { ...bindings, ...fields }, msg })
    }
  const logger: Logger & { entries: LogEntry[] } = {
    entries,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (b) => captureLogger(entries, { ...bindings, ...b }),
  }
  return logger
}

export const unlockDoor: Tool<{ door: string }> = {
  name: 'unlock_door',
  description: 'Unlocks a door',
  parameters: { type: 'object', properties: { door: { type: 'string' } }, required: ['door'] },
  describe: (a) => `unlock the ${a.door} door`,
  async call() {
    return { ok: true }
  },
}

/** Counts how often the gate really asked, so "no phone needed" is visible. */
class CountingApprover implements Approver {
  asked: ApprovalRequest[] = []
  constructor(readonly inner: Approver) {}
  get audience() {
    return this.inner.audience
  }
  unavailable(): string | undefined {
    return this.inner.unavailable?.()
  }
  request(r: ApprovalRequest, s: AbortSignal): Promise<ApprovalDecision> {
    this.asked.push(r)
    return this.inner.request(r, s)
  }
}

/**
 * One device (approver + status + real gate) and two paired phones on a broker. The device and
 * its gate share one clock: the real one, or a virtual one the test moves (`clock`).
 */
export async function deviceWorld(
  broker: TestBroker,
  opts: {
    timeoutMs?: number
    deviceId?: string
    clock?: Clock
    /** false: created unconnected, as the appliance does until it listens (`connection.start()`). */
    connect?: boolean
    /** Another broker URL for the device (one that is not there). */
    url?: string
  } = {},
) {
  const clock = opts.clock ?? realClock()
  const deviceId = opts.deviceId ?? `dev-${randomUUID().slice(0, 8)}`
  const keys = new Map<string, Buffer>([
    ['anna', randomBytes(32)],
    ['ben', randomBytes(32)],
  ])
  const logger = captureLogger()
  const state = new DeviceState()
  const device = createDeviceMqtt({
    url: opts.url ?? broker.url,
    deviceId,
    prefix: PREFIX,
    ...USERS.device,
    phones: () => keys,
    logger,
    model: 'test-model',
    backoffMinMs: 50,
    backoffMaxMs: 300,
    clock,
    device: state,
    ...(opts.connect === false && { connect: false }),
  })
  // The retained status follows the device's state, as the composition wires it.
  showStatus(state, device, false)
  if (opts.connect !== false) await device.approver.ready()
  // As the appliance does: the device's state counts what is pending.
  const desk = testDesk(device, { clock, logger })
  desk.listen(approvalTracker(state))
  const counting = new CountingApprover(desk)
  const store = new SqliteStore(':memory:')
  const grants = new Grants(store)
  const gate = new Gate({
    policies: {},
    approver: counting,
    grants,
    clock,
    approvalTimeoutMs: opts.timeoutMs ?? 15_000,
  })
  const ctx = (over: Partial<CallContext> = {}): CallContext => ({
    signal: new AbortController().signal,
    channel: 'voice',
    conversationId: 'conv-1',
    callId: 'call-1',
    gate,
    logger,
    onPending: () => {},
    ...over,
  })
  const phones: PhoneClient[] = []
  const pairing = (phone: string): Pairing =>
    testPairing(broker.url, deviceId, phone, keys.get(phone) ?? randomBytes(32))
  const phone = async (name: string, key?: Buffer) => {
    const p = new PhoneClient({
      link: testPhoneLink,
      pairing: { ...pairing(name), ...(key && { key }) },
      ...USERS.phone,
      logger: captureLogger(),
    })
    phones.push(p)
    await p.start()
    return p
  }
  let consumed = 0
  const raws: MqttClient[] = []
  const raw = async (user: { username: string; password: string } = USERS.intruder) => {
    const c = await mqtt.connectAsync(broker.url, { ...user, reconnectPeriod: 0 })
    raws.push(c)
    return c
  }
  return {
    deviceId,
    keys,
    logger,
    device,
    approver: device.approver,
    desk,
    topics: device.approver.topics,
    asked: counting.asked,
    grants,
    store,
    gate,
    /** gate.check, with the rejection marked handled: tests assert on it later. */
    check(tool: Tool<{ door: string }>, args: { door: string }, c: CallContext): Promise<void> {
      const p = gate.check(tool as Tool, args, c)
      p.catch(() => {})
      return p
    },
    ctx,
    phone,
    raw,
    /** Only the phone sees the id: wait for the gate to put a request on the broker. */
    async nextRequest(p: PhoneClient): Promise<string> {
      await until(() => counting.asked.length > consumed, 'the gate to ask')
      const id = counting.asked[consumed++]!.id
      await p.waitFor(id)
      return id
    },
    /** Retained messages under the device's approvals, read deterministically (see probe). */
    async retainedRequests(): Promise<Map<string, string>> {
      const c = await mqtt.connectAsync(broker.url, { ...USERS.intruder, reconnectPeriod: 0 })
      const probe = `${PREFIX}/${deviceId}/probe/${randomUUID()}`
      const got = new Map<string, string>()
      const done = new Promise<void>((resolve) => {
        c.on('message', (topic, payload, packet) => {
          if (topic === probe) resolve()
          else if (packet.retain && payload.length > 0) got.set(topic, payload.toString())
        })
      })
      // Retained messages for the first subscription are sent before the probe we publish after it.
      await c.subscribeAsync([device.approver.topics.requests], { qos: 1 })
      await c.subscribeAsync(probe, { qos: 1 })
      await c.publishAsync(probe, 'x', { qos: 1 })
      await done
      await c.endAsync()
      return got
    },
    /** The device's state, as the status shows it. */
    state,
    /** Decisions refused for `reason`, as the device's state counts them. */
    rejected(reason: string): number {
      return state.snapshot.refused.decisions[reason] ?? 0
    },
    /** Every refused decision, by reason. */
    refusals(): Readonly<Record<string, number>> {
      return state.snapshot.refused.decisions
    },
    /** Approvals out to the phones, as the device's state counts them. */
    pending(): number {
      return state.snapshot.pendingApprovals
    },
    async close() {
      for (const p of phones) await p.close().catch(() => {})
      for (const c of raws) await c.endAsync(true).catch(() => {})
      desk.withdrawAll()
      await device.close().catch(() => {})
      store.close()
    },
  }
}

export type World = Awaited<ReturnType<typeof deviceWorld>>
