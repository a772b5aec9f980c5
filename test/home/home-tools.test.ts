import { afterEach, describe, expect, it } from 'vitest'
import type { PolicyTable } from '../../src/core/policy.js'
import { settle } from '../../src/testing/virtual-clock.js'
import { type CoreFixture, coreFixture } from '../helpers/core.js'
import { type HomeWorldOptions, homeWorld } from './world.js'

type World = Awaited<ReturnType<typeof homeWorld>>
let w: World | undefined
let core: CoreFixture

afterEach(async () => {
  await w?.close()
  w = undefined
})

async function open(o: HomeWorldOptions = {}, policies?: PolicyTable) {
  core = coreFixture({ policies })
  w = await homeWorld(o)
  return w
}

/** Calls a tool by voice; answers the phone with `answer` if (and only if) it is asked. */
async function say(name: string, args: Record<string, unknown>, answer?: 'approve' | 'deny') {
  const world = w as World
  const asked = core.approver.asked.length
  const done = world.tools.call(core.ctx(), name, args)
  if (answer) {
    await until(() => core.approver.asked.length > asked)
    core.approver.last().answer({ decision: answer, by: 'anna' })
  }
  const outcome = await done
  const request = core.approver.asked.length > asked ? core.approver.last().request : undefined
  return { outcome, request }
}

async function until(cond: () => boolean, ms = 3000) {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await settle()
    await new Promise((r) => setTimeout(r, 5))
  }
}

const calls = () =>
  (w as World).ha.house.calls.map(
    (c) => `${c.via} ${c.domain}.${c.service} ${c.entityIds.join(',')}`,
  )

describe('Home Assistant tools behind the gate', () => {
  it('switches a light by voice at once, through HA’s own tool, with no phone asked', async () => {
    await open()
    const { outcome, request } = await say('intent__HassTurnOn', { name: 'kitchen light' })
    expect(request).toBeUndefined()
    expect(outcome.ok).toBe(true)
    expect(calls()).toEqual(['websocket homeassistant.turn_on light.kitchen'])
    expect(outcome).toMatchObject({
      ok: true,
      value: { done: true, confirmed: true, result: 'Kitchen Light is on.' },
    })
  })

  it('unlocks the front door only after a yes, on exactly lock.front_door over the WebSocket, and says it is unlocked', async () => {
    await open()
    const { outcome, request } = await say('intent__HassTurnOff', { name: 'Front Door' }, 'approve')
    expect(request).toMatchObject({
      tool: 'intent__HassTurnOff',
      action: 'Unlock Front Door — Hall',
      critical: true,
      targets: ['lock.front_door'],
    })
    expect(calls()).toEqual(['websocket lock.unlock lock.front_door'])
    expect(outcome).toMatchObject({
      ok: true,
      value: { done: true, confirmed: true, result: 'Front Door is unlocked.' },
    })
  })

  it('locks the front door with no phone; a no leaves the door locked', async () => {
    await open()
    const locked = await say('intent__HassTurnOn', { name: 'main door' })
    expect(locked.request).toBeUndefined()
    expect(calls()).toEqual(['websocket lock.lock lock.front_door'])
    const refused = await say('intent__HassTurnOff', { name: 'Front Door' }, 'deny')
    expect(refused.outcome).toMatchObject({ ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN' })
    expect(calls()).toEqual(['websocket lock.lock lock.front_door'])
  })

  it('opening the garage is critical, by HassTurnOn and by a position', async () => {
    await open()
    const byOn = await say('intent__HassTurnOn', { name: 'Garage Door' }, 'deny')
    expect(byOn.request).toMatchObject({
      action: 'Open Garage Door — Garage',
      critical: true,
      targets: ['cover.garage_door'],
    })
    const byPosition = await say(
      'intent__HassSetPosition',
      { device_class: ['garage'], position: 20 },
      'deny',
    )
    expect(byPosition.request).toMatchObject({ critical: true, targets: ['cover.garage_door'] })
    expect(byPosition.request?.action).toBe('Open to 20% Garage Door — Garage')
    // The kitchen blind is no way in: it opens at once.
    const blind = await say('intent__HassTurnOn', { name: 'Kitchen Blind' })
    expect(blind.request).toBeUndefined()
    expect(calls()).toEqual(['websocket cover.open_cover cover.kitchen_blind'])
  })

  it('"unlock everything" (a domain alone) is critical and lists every exposed lock, and a yes unlocks exactly those', async () => {
    await open()
    const { request } = await say('intent__HassTurnOff', { domain: ['lock'] }, 'approve')
    expect(request?.critical).toBe(true)
    expect(request?.targets).toEqual(['lock.front_door', 'lock.back_door'])
    expect(request?.action).toBe('Unlock Front Door — Hall, Back Door — Garden')
    expect(calls()).toEqual([
      'websocket lock.unlock lock.front_door',
      'websocket lock.unlock lock.back_door',
    ])
    expect(w?.ha.house.entity('lock.safe')?.state).toBe('locked')
  })

  it('a name that matches two entities asks, listing both; in a room with one of them it is that one', async () => {
    await open()
    const { request } = await say('intent__HassTurnOn', { name: 'Lamp' }, 'deny')
    expect(request).toMatchObject({
      critical: true,
      targets: ['light.bedroom_lamp', 'light.living_room_lamp'],
    })
    expect(request?.action).toBe('Turn on Lamp — Bedroom, Lamp — Living Room')
    await w?.close()
    w = await homeWorld({ area: 'Bedroom' })
    const here = await say('intent__HassTurnOn', { name: 'Lamp' })
    expect(here.request).toBeUndefined()
    expect(calls()).toEqual(['websocket homeassistant.turn_on light.bedroom_lamp'])
  })

  it('a call naming no area acts in the speaker’s room, not the whole house', async () => {
    await open({ area: 'Kitchen' })
    await say('intent__HassTurnOn', { domain: ['light'] })
    expect(calls()).toEqual([
      'websocket homeassistant.turn_on light.kitchen',
      'websocket homeassistant.turn_on light.kitchen_counter',
    ])
    expect(w?.ha.house.entity('light.hall')?.state).toBe('on')
    expect(w?.ha.house.entity('light.bedroom_lamp')?.state).toBe('off')
    // A call HA's own tool carries (a brightness) gets the speaker's area in its arguments.
    await say('light__HassLightSet', { domain: ['light'], brightness: 40 })
    expect(w?.ha.mcpLog.at(-1)?.params).toMatchObject({
      arguments: { domain: ['light'], brightness: 40, area: 'Kitchen' },
    })
  })

  it('a script not marked safe asks; one marked safe runs at once', async () => {
    await open({ policy: { safeScripts: ['script.movie_night'] } })
    const unsafe = await say('script__open_up', {}, 'approve')
    expect(unsafe.request).toMatchObject({
      action: 'Run Open Up — Hall',
      critical: true,
      targets: ['script.open_up'],
    })
    expect(calls()).toEqual(['websocket script.turn_on script.open_up'])
    const safe = await say('script__movie_night', {})
    expect(safe.request).toBeUndefined()
    expect(calls().at(-1)).toBe('websocket script.turn_on script.movie_night')
  })

  it('an entity renamed between the request and the yes is refused, not redirected', async () => {
    await open()
    const done = w?.tools.call(core.ctx(), 'intent__HassTurnOff', { name: 'Front Door' })
    await until(() => core.approver.asked.length === 1)
    w?.ha.house.rename('lock.front_door', 'Side Door')
    core.approver.last().answer({ decision: 'approve', by: 'anna' })
    expect(await done).toMatchObject({ ok: false, code: 'NOC_ERR_HOME_CHANGED' })
    expect(calls()).toEqual([])
    expect(w?.ha.house.entity('lock.front_door')?.state).toBe('locked')
  })

  it('HA down and a revoked token: a sentence the model can say, nothing run', async () => {
    await open()
    w?.ha.revokeToken()
    // HA closes the revoked token's sockets; the speaker sees that before the next call.
    await new Promise((r) => setTimeout(r, 100))
    const revoked = await say('intent__HassTurnOn', { name: 'Kitchen Light' })
    expect(revoked.outcome).toMatchObject({ ok: false, code: 'NOC_ERR_HOME_UNAUTHORIZED' })
    expect((revoked.outcome as { error: string }).error).toMatch(
      /refused the speaker's access token/,
    )
    await w?.ha.stop()
    const down = await say('intent__HassTurnOn', { name: 'Kitchen Light' })
    expect(down.outcome).toMatchObject({ ok: false, code: 'NOC_ERR_HOME_UNREACHABLE' })
    const after = await say('intent__HassTurnOff', { name: 'Front Door' }, 'approve')
    expect(after.outcome).toMatchObject({ ok: false })
    expect(calls()).toEqual([])
  })

  it('a state that does not change in time is reported as not confirmed; HA’s refusal carries its reason', async () => {
    await open({ confirmMs: 300 })
    ;(w as World).ha.house.stuck.add('lock.back_door')
    const slow = await say('intent__HassTurnOff', { name: 'Back Door' }, 'approve')
    expect(slow.outcome).toMatchObject({ ok: true, value: { done: false, confirmed: false } })
    expect(JSON.stringify(slow.outcome)).toContain('so it is not confirmed')
    ;(w as World).ha.house.failing.set('lock.unlock', 'Front door lock is jammed')
    const jammed = await say('intent__HassTurnOff', { name: 'Front Door' }, 'approve')
    expect(jammed.outcome).toMatchObject({ ok: false, code: 'NOC_ERR_HOME_FAILED' })
    expect((jammed.outcome as { error: string }).error).toContain('jammed')
  })

  it('a call that names no target: a setting means its own domain here; a switch with none asks', async () => {
    await open()
    const dim = await say('light__HassLightSet', { brightness: 30 })
    expect(dim.request).toBeUndefined()
    expect(w?.ha.mcpLog.at(-1)?.params).toMatchObject({
      arguments: { brightness: 30, area: 'Kitchen' },
    })
    expect(calls()).toEqual([
      'intent light.turn_on light.kitchen',
      'intent light.turn_on light.kitchen_counter',
    ])
    const sweep = await say('intent__HassTurnOff', {}, 'deny')
    expect(sweep.request).toMatchObject({ critical: true })
    expect(calls()).toHaveLength(2)
  })

  it('a grant given while a name meant a lamp does not cover it once the name means a lock', async () => {
    await open({}, { intent__HassTurnOff: { voice: 'ask' } })
    const lamp = w?.tools.call(core.ctx(), 'intent__HassTurnOff', { name: 'Hall Light' })
    await until(() => core.approver.asked.length === 1)
    core.approver.last().answer({ decision: 'approve', by: 'anna', grant: 'session' })
    expect(await lamp).toMatchObject({ ok: true })
    // The same lamp again: the grant covers it, and the History is told which lamp.
    await say('intent__HassTurnOff', { name: 'Hall Light' })
    expect(core.covered.map((c) => c.targets)).toEqual([['light.hall']])
    w?.ha.house.rename('light.hall', 'Old Hall Light')
    w?.ha.house.rename('lock.front_door', 'Hall Light')
    await w?.homeTools.refresh()
    const { request } = await say('intent__HassTurnOff', { name: 'Hall Light' }, 'deny')
    expect(request).toMatchObject({ critical: true, targets: ['lock.front_door'] })
    expect(w?.ha.house.entity('lock.front_door')?.state).toBe('locked')
  })

  it('typed from a phone the same: a light at once, an unlock only after a yes', async () => {
    await open()
    const typed = core.ctx({ channel: 'text', askedBy: 'ben' })
    expect(
      await w?.tools.call(typed, 'intent__HassTurnOn', { name: 'Kitchen Light' }),
    ).toMatchObject({ ok: true })
    expect(core.approver.asked).toHaveLength(0)
    const done = w?.tools.call(typed, 'intent__HassTurnOff', { name: 'Front Door' })
    await until(() => core.approver.asked.length === 1)
    expect(core.approver.last().request).toMatchObject({
      channel: 'text',
      critical: true,
      askedBy: 'ben',
      targets: ['lock.front_door'],
    })
    core.approver.last().answer({ decision: 'approve', by: 'anna' })
    expect(await done).toMatchObject({ ok: true })
    expect(calls()).toEqual([
      'websocket homeassistant.turn_on light.kitchen',
      'websocket lock.unlock lock.front_door',
    ])
  })

  it('tool names from an HA before 2026.9 work the same', async () => {
    await open({ naming: 'legacy' })
    const { request } = await say('HassTurnOff', { name: 'Front Door' }, 'approve')
    expect(request).toMatchObject({ critical: true, targets: ['lock.front_door'] })
    expect(calls()).toEqual(['websocket lock.unlock lock.front_door'])
    const script = await say('open_up', {}, 'deny')
    expect(script.request).toMatchObject({ critical: true, targets: ['script.open_up'] })
  })

  it('schemas come out in the subset a model accepts; a name a built-in holds is refused', async () => {
    await open({
      builtIns: [
        {
          name: 'intent__HassTurnOn',
          description: 'mine',
          parameters: { type: 'object' },
          call: async () => 'mine',
        },
      ],
    })
    expect(w?.listed.refused).toEqual(['intent__HassTurnOn'])
    expect(w?.tools.get('intent__HassTurnOn')?.description).toBe('mine')
    const live = w?.tools.declarations().find((d) => d.name === 'homeassistant__GetLiveContext')
    expect(JSON.stringify(live?.parameters)).not.toContain('anyOf')
    expect(live?.parameters).toMatchObject({
      properties: { domain: { type: 'array', items: { type: 'string' } } },
    })
  })
})
