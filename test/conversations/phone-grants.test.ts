import { describe, expect, it } from 'vitest'
import { phone } from '../../src/app/commands/phone.js'
import { DeviceRefusal } from '../../src/phone/conversations.js'
import { grantSummarySchema } from '../../src/protocol/grant-ops.js'
import { mosquittoBroker, USERS } from '../helpers/brokers.js'
import { captureIo } from '../helpers/capture-io.js'
import { missingCommands } from '../helpers/system.js'
import { until } from '../helpers/wait.js'
import { worldsOn } from '../phone/world.js'

const skip = missingCommands('mosquitto', 'mosquitto_passwd')

describe.skipIf(skip !== undefined)('grants from the phone (Mosquitto, per-phone ACL)', () => {
  const worlds = worldsOn(mosquittoBroker)

  it('a grant is listed (exactly the documented shape) and revoked; the next call asks again', async () => {
    const w = await worlds.open()
    const world = w
    const anna = await w.phone('anna')
    const ben = await w.phone('ben')
    const annaApproves = await w.approvals('anna')
    // What reaches the broker on the phones' reply topics, read as the device's broker user.
    const wire: Buffer[] = []
    const tap = await w.raw(USERS.device)
    await tap.subscribeAsync([
      w.topics.conversationReply('anna'),
      w.topics.conversationReply('ben'),
    ])
    tap.on('message', (_t, p) => wire.push(p))

    expect(await anna.grants()).toEqual([])

    // Anna types; the light asks; she approves for an hour.
    w.server.queueGenerate(
      { functionCalls: [{ id: 't1', name: 'set_light', args: { room: 'kitchen' } }] },
      { text: 'On.' },
    )
    const said = anna.say('new', 'Kitchen light, please')
    await until(() => world.asked.length === 1, 'the gate to ask')
    const until1h = Date.now() + 3_600_000
    await annaApproves.decide((await annaApproves.waitFor(w.asked[0]?.id ?? '')).id, 'approve', {
      until: until1h,
    })
    const { conversation } = await said

    // Ben (any paired phone) sees it.
    const listed = await ben.grants()
    expect(listed).toHaveLength(1)
    const g = listed[0]
    expect(g).toEqual({
      id: expect.any(String),
      tool: 'set_light',
      channel: 'text',
      scope: 'exact',
      args: { room: 'kitchen' },
      expiry: 'until',
      until: until1h,
      createdAt: expect.any(Number),
      by: 'anna',
    })
    expect(grantSummarySchema.strict().safeParse(g).success).toBe(true)

    // The grant covers the same call: no one is asked.
    w.server.queueGenerate(
      { functionCalls: [{ id: 't2', name: 'set_light', args: { room: 'kitchen' } }] },
      { text: 'Still on.' },
    )
    expect((await anna.say(conversation, 'Again')).text).toBe('Still on.')
    expect(w.asked).toHaveLength(1)
    expect(w.lit).toEqual(['kitchen', 'kitchen'])

    // Anna revokes it: gone from the list, logged, and the next call asks again.
    await anna.revoke(g?.id ?? '')
    expect(await anna.grants()).toEqual([])
    expect(w.logger.entries).toContainEqual(
      expect.objectContaining({
        fields: expect.objectContaining({ event: 'grant_revoked', grantId: g?.id, phone: 'anna' }),
      }),
    )
    w.server.queueGenerate(
      { functionCalls: [{ id: 't3', name: 'set_light', args: { room: 'kitchen' } }] },
      { text: 'Not this time.' },
    )
    const again = anna.say(conversation, 'Once more')
    await until(() => world.asked.length === 2, 'the gate to ask again')
    await annaApproves.decide((await annaApproves.waitFor(w.asked[1]?.id ?? '')).id, 'deny')
    await again
    expect(w.lit).toEqual(['kitchen', 'kitchen'])

    // Revoking it twice, or an unknown id: a clear refusal.
    const twice = await anna.revoke(g?.id ?? '').catch((e: unknown) => e)
    expect(twice).toBeInstanceOf(DeviceRefusal)
    expect(twice).toMatchObject({ code: 'NOC_ERR_NOT_FOUND' })
    // A malformed id is a bad request, not a lookup.
    await expect(anna.revoke('../etc')).rejects.toMatchObject({ code: 'NOC_ERR_BAD_REQUEST' })

    // On the wire: signed replies under the limit, the grant item exactly as listed.
    const replies = wire.map((p) => JSON.parse(p.toString()) as Record<string, unknown>)
    const items = replies.filter((r) => r.kind === 'items')
    expect(items.map((r) => (r.body as { items: unknown[] }).items)).toContainEqual([g])
    expect(replies.find((r) => (r.body as { revoked?: string }).revoked === g?.id)).toMatchObject({
      kind: 'done',
      device: w.deviceId,
      phone: 'anna',
      mac: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    for (const p of wire) expect(p.length).toBeLessThanOrEqual(16 * 1024)
  })

  it('nocturn phone grants / revoke: the reference phone lists and takes back a grant', async () => {
    const w = await worlds.open()
    const g = w.grants.add(
      {
        tool: 'unlock_door',
        channel: 'voice',
        scope: { kind: 'pattern', pattern: { door: 'back' } },
        expiry: { kind: 'session', conversationId: 'conv-1' },
        createdBy: { kind: 'phone', id: 'ben' },
        createdAt: Date.now(),
      },
      { critical: false },
    )
    const env = w.phoneEnv('anna')
    const list = captureIo(env)
    expect(await phone(['grants'], list.io)).toBe(0)
    expect(list.text.out).toBe(
      `${g.id}  unlock_door  voice  calls with {"door":"back"}  in conversation conv-1  by ben\n`,
    )
    const revoke = captureIo(env)
    expect(await phone(['revoke', g.id], revoke.io)).toBe(0)
    expect(revoke.text.out).toBe(`revoked ${g.id}\n`)
    expect(w.grants.list()[0]?.revokedAt).toEqual(expect.any(Number))
    const again = captureIo(env)
    expect(await phone(['revoke', g.id], again.io)).toBe(1)
    expect(again.text.err).toMatch(/refused \(NOC_ERR_NOT_FOUND\)/)
    const empty = captureIo(env)
    expect(await phone(['grants'], empty.io)).toBe(0)
    expect(empty.text.out).toBe('')
  })
})
