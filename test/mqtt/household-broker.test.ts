import { randomBytes, randomUUID } from 'node:crypto'
import mqtt from 'mqtt'
import { describe, expect, it } from 'vitest'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { createDeviceMqtt } from '../../src/adapters/mqtt/index.js'
import { PROBE_LEVEL, probeBroker, writeProbes } from '../../src/adapters/mqtt/probe.js'
import { broadcastListener } from '../../src/approvals/broadcast-listener.js'
import { ToolSet } from '../../src/core/tool-set.js'
import {
  newNonce,
  signDecision,
  signOutcome,
  topicsFor,
  verifyOutcomeMac,
} from '../../src/protocol/index.js'
import { VirtualClock } from '../../src/testing/virtual-clock.js'
import { homeActionTool } from '../../src/tools/home-actions.js'
import {
  documentedAcl,
  freePort,
  HOME_TOPIC,
  mosquittoBroker,
  PREFIX,
  USERS,
} from '../helpers/brokers.js'
import { testDesk } from '../helpers/device-mqtt.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { brokerWithWorlds } from '../helpers/worlds.js'
import { captureLogger, deviceWorld, unlockDoor } from './fixture.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')

/**
 * The household's real broker (issue: an approved action that never happened): Mosquitto with the
 * ACL of docs/broker.md, byte for byte, and the device over MQTT 5.
 */
describe.skipIf(skip)('the household broker: Mosquitto with the documented ACL', () => {
  const worlds = brokerWithWorlds(
    (port) =>
      mosquittoBroker(port, {
        extraAcl: [
          // A house client that watches the lock, and a device whose ACL lost its own topics.
          `user ${USERS.intruder.username}`,
          'topic read zigbee2mqtt/#',
          `user ${USERS.lockedDevice.username}`,
          `topic read ${PREFIX}/#`,
        ],
      }),
    deviceWorld,
  )

  it('Mosquitto takes the documented ACL without a warning', () => {
    expect(documentedAcl()).toContain('pattern write nocturn/v1/+/conversations/request/%u')
    for (const line of documentedAcl().split('\n')) {
      if (line.startsWith('pattern ')) expect(line).toMatch(/%[uc]/)
    }
    const warnings = (worlds.broker().log?.() ?? '')
      .split('\n')
      .filter((l) => /warning/i.test(l) && !/run as root/.test(l))
    expect(warnings).toEqual([])
  })

  it('a home action the ACL does not cover is refused and the model is told so; a covered one is acknowledged and delivered', async () => {
    const w = await worlds.open()
    expect(w.device.connection.protocolVersion).toBe(5)
    const house = await w.raw(USERS.intruder)
    const delivered: string[] = []
    house.on('message', (t, p) => delivered.push(`${t} ${p.toString()}`))
    await house.subscribeAsync('zigbee2mqtt/#', { qos: 1 })
    const action = (name: string, topic: string) =>
      homeActionTool(
        {
          name,
          description: `Does ${name}.`,
          topic,
          payload: { state: 'UNLOCK' },
          qos: 0,
          retain: false,
          critical: false,
          policy: { voice: 'allow' },
        },
        w.device.connection,
      )
    const tools = new ToolSet([
      action('unlock_back_door', 'zigbee2mqtt/back_door/set'),
      action('unlock_front_door', HOME_TOPIC),
    ])
    const refused = await tools.call(w.ctx(), 'unlock_back_door', {})
    expect(refused).toMatchObject({ ok: false, code: 'NOC_ERR_BROKER_REFUSED' })
    expect(refused.ok === false && refused.error).toMatch(/refused the command.*not sent/)
    expect(w.logger.entries).toContainEqual(
      expect.objectContaining({
        fields: expect.objectContaining({
          event: 'home_action_not_sent',
          refused: true,
          topic: 'zigbee2mqtt/back_door/set',
        }),
      }),
    )
    expect(w.logger.entries.some((e) => e.fields.event === 'home_action_sent')).toBe(false)
    const sent = await tools.call(w.ctx(), 'unlock_front_door', {})
    expect(sent).toMatchObject({ ok: true, value: { sent: true, acknowledgedByBroker: true } })
    await until(() => delivered.length > 0, 'the lock to receive it')
    expect(delivered).toEqual([`${HOME_TOPIC} {"state":"UNLOCK"}`])
  })

  it('doctor names a home topic the ACL cannot write, and the device’s own topics, without actuating anything', async () => {
    const deviceId = `dev-${randomUUID().slice(0, 8)}`
    const topics = topicsFor(PREFIX, deviceId)
    const house = await mqtt.connectAsync(worlds.broker().url, {
      ...USERS.intruder,
      reconnectPeriod: 0,
    })
    const seen: string[] = []
    house.on('message', (t, p) => seen.push(`${t} [${p.length} bytes]`))
    // What a lock and a phone listen to: the exact topics, never the probes below them.
    await house.subscribeAsync([HOME_TOPIC, 'zigbee2mqtt/back_door/set', topics.requests], {
      qos: 1,
    })
    const probe = (who: { username: string; password: string }) =>
      probeBroker({
        url: worlds.broker().url,
        clientId: `doctor-${randomUUID().slice(0, 8)}`,
        ...who,
        rights: writeProbes(topics, [HOME_TOPIC, 'zigbee2mqtt/back_door/set']),
        clock: realClock(),
      })
    const device = await probe(USERS.device)
    const locked = await probe(USERS.lockedDevice)
    await house.endAsync()
    if (!device.ok || !locked.ok) throw new Error('the broker did not accept the device')
    expect(device.protocolVersion).toBe(5)
    expect(device.rights.filter((r) => r.result !== 'ok').map((r) => r.label)).toEqual([
      'home action topic zigbee2mqtt/back_door/set',
    ])
    expect(locked.rights.filter((r) => r.result === 'refused').map((r) => r.label)).toEqual([
      'approval requests',
      'approval outcomes',
      'status',
      'conversation replies',
      `home action topic ${HOME_TOPIC}`,
      'home action topic zigbee2mqtt/back_door/set',
    ])
    for (const r of device.rights) expect(r.topic).toContain(`/${PROBE_LEVEL}`)
    // Nothing reached the locks; a phone saw at most the empty clear of an id nobody uses.
    expect(seen.filter((t) => t !== `${topics.request(PROBE_LEVEL)} [0 bytes]`)).toEqual([])
  })

  it('with the broker gone, a gated call fails at once with one answer and no "waiting" first', async () => {
    const local = mosquittoBroker(await freePort())
    await local.start()
    const w = await deviceWorld(local)
    try {
      await local.kill()
      await until(() => !w.device.connection.connected, 'the device to notice')
      const pending: unknown[] = []
      await expect(
        w.check(unlockDoor, { door: 'front' }, w.ctx({ onPending: (p) => pending.push(p) })),
      ).rejects.toMatchObject({ code: 'NOC_ERR_APPROVER_UNREACHABLE' })
      expect(pending).toEqual([])
      expect(w.asked).toEqual([])
    } finally {
      await w.close()
      await local.stop()
    }
  })

  it('a device without rights on its own approvals topic fails the approval at once, with a clear line', async () => {
    const keys = new Map([['anna', randomBytes(32)]])
    const logger = captureLogger()
    const ended: string[] = []
    const device = createDeviceMqtt({
      url: worlds.broker().url,
      deviceId: `dev-${randomUUID().slice(0, 8)}`,
      prefix: PREFIX,
      ...USERS.lockedDevice,
      phones: () => keys,
      logger,
      clock: realClock(),
    })
    const desk = testDesk(device, { logger })
    desk.listen(broadcastListener({ requested: () => {}, ended: (e) => ended.push(e.state) }))
    try {
      await device.approver.ready()
      const now = Date.now()
      const answer = desk.request(
        {
          id: randomUUID(),
          tool: 'unlock_door',
          action: 'unlock the front door',
          args: {},
          argsDigest: '',
          channel: 'voice',
          conversationId: 'c1',
          critical: true,
          createdAt: now,
          // An hour: only the refusal can end it within this test.
          expiresAt: now + 3_600_000,
        },
        new AbortController().signal,
      )
      await expect(answer).rejects.toMatchObject({ code: 'NOC_ERR_BROKER_REFUSED' })
      // Nothing is left waiting: withdrawing everything ends nothing.
      desk.withdrawAll()
      expect(ended.filter((s) => s === 'withdrawn')).toEqual([])
      expect(logger.entries).toContainEqual(
        expect.objectContaining({
          level: 'error',
          fields: expect.objectContaining({ event: 'approval_request_refused', reasonCode: 0x87 }),
        }),
      )
    } finally {
      await device.close()
    }
  })

  it('outcomes are signed per phone with the grant the device kept; a forged outcome or a clear ends no card', async () => {
    const w = await worlds.open()
    const anna = await w.phone('anna')
    const intruder = await w.raw()
    const events: string[] = []
    anna.on((e) => events.push(e.kind === 'refused' ? `refused ${e.reason}` : e.kind))
    const call = w.check(unlockDoor, { door: 'front' }, w.ctx())
    const id = await w.nextRequest(anna)
    const digest = anna.pending().find((r) => r.id === id)?.digest ?? ''
    // Someone else on the broker: clears the request and announces an approval it signed itself.
    const at = Date.now()
    const forged = { id, state: 'approved', by: 'anna', at, digest }
    await intruder.publishAsync(w.topics.request(id), '', { qos: 1, retain: true })
    await intruder.publishAsync(
      w.topics.outcome(id),
      JSON.stringify({
        v: 1,
        id,
        state: 'approved',
        by: 'anna',
        at,
        macs: { anna: signOutcome(randomBytes(32), forged) },
      }),
      { qos: 1 },
    )
    await until(() => events.includes('refused outcome bad-mac'), 'the forged outcome refused')
    expect(events).toContain('cleared')
    // The card is still there (the device also put its request back), and answerable.
    expect(anna.pending().map((r) => r.id)).toContain(id)
    const outcome = anna.waitOutcome(id)
    await anna.decide(id, 'approve', 'session')
    await call
    const o = await outcome
    expect(o).toMatchObject({ v: 1, id, state: 'approved', by: 'anna', grant: 'session' })
    const key = w.keys.get('anna') as Buffer
    expect(verifyOutcomeMac(key, { ...o, digest }, o.macs?.anna ?? '')).toBe(true)
    expect(Object.keys(o.macs ?? {}).sort()).toEqual(['anna', 'ben'])
    expect(anna.pending().map((r) => r.id)).not.toContain(id)
    expect(events.filter((e) => e === 'gone')).toHaveLength(1)
  })

  it('a critical tool asks every time: a "session" yes is counted once, and the outcome says so', async () => {
    const w = await worlds.open()
    const anna = await w.phone('anna')
    const critical = { ...unlockDoor, critical: true }
    const first = w.check(critical, { door: 'front' }, w.ctx())
    const id = await w.nextRequest(anna)
    const outcome = anna.waitOutcome(id)
    // An older phone that still offers "this conversation" for a critical tool.
    const digest = anna.pending().find((r) => r.id === id)?.digest ?? ''
    const fields = {
      id,
      decision: 'approve' as const,
      grant: 'session' as const,
      digest,
      phone: 'anna',
      at: Date.now(),
      nonce: newNonce(),
    }
    const { digest: _d, ...rest } = fields
    const phoneLink = await w.raw(USERS.anna)
    await phoneLink.publishAsync(
      w.topics.decision(id),
      JSON.stringify({ v: 1, ...rest, mac: signDecision(w.keys.get('anna') as Buffer, fields) }),
      { qos: 1 },
    )
    await first
    expect(await outcome).toMatchObject({ state: 'approved', grant: 'once' })
    expect(w.grants.list()).toEqual([])
    // The same call again, in the same conversation: asked again.
    const second = w.check(critical, { door: 'front' }, w.ctx())
    const id2 = await w.nextRequest(anna)
    await expect(anna.decide(id2, 'approve', 'session')).rejects.toThrow(/asks every time/)
    await anna.decide(id2, 'deny')
    await expect(second).rejects.toMatchObject({ code: 'NOC_ERR_DENIED_BY_HUMAN' })
  })

  it('planted requests under invalid ids are cleared and logged at start; a decision there is counted', async () => {
    const deviceId = `dev-${randomUUID().slice(0, 8)}`
    const base = `${PREFIX}/${deviceId}/approvals`
    const planter = await mqtt.connectAsync(worlds.broker().url, {
      ...USERS.intruder,
      reconnectPeriod: 0,
    })
    const bad = [`${base}/not json`, `${base}/${'x'.repeat(80)}`]
    for (const t of bad) await planter.publishAsync(t, '{"v":1}', { qos: 1, retain: true })
    const w = await worlds.open({ deviceId })
    await until(
      () =>
        w.logger.entries.filter((e) => e.fields.event === 'invalid_request_cleared').length === 2,
      'both leftovers cleared',
    )
    await planter.publishAsync(`${base}/not json/decision`, '{}', { qos: 1 })
    await until(() => w.rejected('invalid-topic') === 1, 'the decision counted')
    // Nothing retained is left under the device's approvals.
    const check = await mqtt.connectAsync(worlds.broker().url, {
      ...USERS.intruder,
      reconnectPeriod: 0,
    })
    const left: string[] = []
    check.on('message', (t, p) => p.length > 0 && left.push(t))
    await check.subscribeAsync(`${base}/+`, { qos: 1 })
    await new Promise((r) => setTimeout(r, 300))
    expect(left).toEqual([])
    await check.endAsync()
    await planter.endAsync()
  })

  it('a flood of junk decisions is counted in full but logged in summaries, not a line each', async () => {
    // The log's ten-second window moves only when the test says so, however slowly a loaded
    // machine works through the flood.
    const clock = new VirtualClock(Date.now())
    const w = await worlds.open({ clock })
    const flooder = await w.raw(USERS.intruder)
    const N = 2000
    for (let i = 0; i < N; i += 250) {
      const burst: Promise<unknown>[] = []
      for (let j = i; j < i + 250; j++) {
        burst.push(flooder.publishAsync(w.topics.decision(randomUUID()), '{junk', { qos: 0 }))
      }
      await Promise.all(burst)
    }
    await until(() => w.rejected('malformed-json') === N, 'every message counted', 20_000)
    const lines = w.logger.entries.filter((e) => e.fields.event === 'decision_rejected')
    expect(lines.length).toBeLessThanOrEqual(5)
    await clock.advance(10_000)
    const summary = w.logger.entries.find((e) => e.fields.event === 'rejections_summary')
    expect(summary?.fields.suppressed).toEqual({ 'malformed-json': N - lines.length })
  }, 60_000)
})
