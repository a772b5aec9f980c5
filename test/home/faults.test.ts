import { afterEach, describe, expect, it } from 'vitest'
import type { CallContext } from '../../src/core/types.js'
import { FakeHouse, largeHouse } from '../../src/testing/fake-home-assistant/house.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { settle, VirtualClock } from '../../src/testing/virtual-clock.js'
import { type CoreFixture, coreFixture } from '../helpers/core.js'
import { type HomeWorldOptions, homeWorld } from './world.js'

type World = Awaited<ReturnType<typeof homeWorld>>
let w: World | undefined
let core: CoreFixture
let log: MemoryLogger

afterEach(async () => {
  await w?.close()
  w = undefined
})

async function open(o: HomeWorldOptions = {}) {
  core = coreFixture()
  log = new MemoryLogger()
  w = await homeWorld(o)
  return w
}

const ctx = (): CallContext => core.ctx({ logger: log })

async function until(cond: () => boolean, ms = 3000) {
  const end = Date.now() + ms
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await settle()
    await new Promise((r) => setTimeout(r, 5))
  }
}

const events = () => log.records.map((r) => r.fields.event).filter(Boolean)

describe('Home Assistant faults: each a sentence for the model, a log line with an event, nothing else broken', () => {
  it('an approval that waits longer than any HA request may last still acts: no HA request is open while a phone decides', async () => {
    // The adapter's request limit stands in for HA's 60 s; the phone answers well after it.
    await open({ timeoutMs: 1000 })
    const done = w?.tools.call(ctx(), 'intent__HassTurnOff', { name: 'Front Door' })
    await until(() => core.approver.asked.length === 1)
    await new Promise((r) => setTimeout(r, 2500))
    core.approver.last().answer({ decision: 'approve', by: 'anna' })
    expect(await done).toMatchObject({ ok: true, value: { done: true, confirmed: true } })
    expect(w?.ha.house.entity('lock.front_door')?.state).toBe('unlocked')
  })

  it('a slow HA: the call fails as "did not answer in time" and is logged, another call is not held up', async () => {
    await open({ timeoutMs: 800 })
    w?.ha.slow(3000)
    const slow = w?.tools.call(ctx(), 'light__HassLightSet', {
      name: 'Kitchen Light',
      brightness: 50,
    })
    // The built-in path does not wait for HA.
    const quick = await w?.tools.call(ctx(), 'nothing_here', {})
    expect(quick).toMatchObject({ ok: false, code: 'NOC_ERR_UNKNOWN_TOOL' })
    expect(await slow).toMatchObject({
      ok: false,
      code: 'NOC_ERR_HOME_UNREACHABLE',
      error: expect.stringMatching(/did not answer in time/),
    })
    expect(events()).toContain('home_timeout')
  })

  it('HA restarting mid-session: the next calls work on fresh connections — HA’s own tool, a one-shot, an approved action', async () => {
    await open()
    const light = (args: Record<string, unknown>) =>
      w?.tools.call(ctx(), 'light__HassLightSet', { name: 'Kitchen Light', ...args })
    expect(await light({ brightness: 20 })).toMatchObject({ ok: true })
    expect(await w?.tools.call(ctx(), 'intent__HassTurnOn', { name: 'Hall Light' })).toMatchObject({
      ok: true,
    })
    await w?.ha.stop()
    await w?.ha.start()
    // HA takes seconds to come back; the speaker has seen its sockets close by then.
    await new Promise((r) => setTimeout(r, 100))
    expect(await light({ brightness: 70 })).toMatchObject({ ok: true })
    expect(await w?.tools.call(ctx(), 'intent__HassTurnOff', { name: 'Hall Light' })).toMatchObject(
      { ok: true },
    )
    const done = w?.tools.call(ctx(), 'intent__HassTurnOff', { name: 'Back Door' })
    await until(() => core.approver.asked.length === 1)
    core.approver.last().answer({ decision: 'approve', by: 'anna' })
    expect(await done).toMatchObject({ ok: true, value: { confirmed: true } })
  })

  it('junk in a tool result is passed on cut and clean; an HA error answer becomes HA’s reason', async () => {
    await open()
    ;(w as World).ha.junk = { text: `not json \u0007\u0000${'x'.repeat(50_000)}` }
    const junk = await w?.tools.call(ctx(), 'homeassistant__GetLiveContext', {})
    expect(junk?.ok).toBe(true)
    const text = String((junk as { value: { result: string } }).value.result)
    expect(text.startsWith('not json x')).toBe(true)
    expect(text.length).toBeLessThanOrEqual(12_000)
    ;(w as World).ha.junk = { text: 'Error calling tool: MatchFailedError(NAME)', isError: true }
    const refused = await w?.tools.call(ctx(), 'light__HassLightSet', {
      name: 'Kitchen Light',
      brightness: 30,
    })
    expect(refused).toMatchObject({
      ok: false,
      code: 'NOC_ERR_HOME_FAILED',
      error: expect.stringContaining('MatchFailedError'),
    })
  })

  it('a tool name no model accepts (a script id too long) is left out and logged, the rest offered', async () => {
    const house = new FakeHouse()
    const long = `script.${'very_long_script_name_'.repeat(4)}`
    house.entities.push({ entityId: long, name: 'Long', aliases: [], state: 'off', exposed: true })
    await open({ house })
    expect(w?.tools.names()).toContain('intent__HassTurnOn')
    expect(w?.tools.names().some((n) => n.includes('very_long'))).toBe(false)
    expect(w?.tools.names().every((n) => n.length <= 64)).toBe(true)
  })

  it('500 exposed entities: listed, resolved, and a sweep of every lock asks once with a card of bounded size', async () => {
    await open({ house: largeHouse(500) })
    expect(w?.listed).toMatchObject({ ok: true })
    expect(w?.homeTools.snapshot?.entities.length).toBe(499)
    const done = w?.tools.call(ctx(), 'intent__HassTurnOff', { domain: ['lock'] })
    await until(() => core.approver.asked.length === 1)
    const request = core.approver.last().request
    const locks = w?.ha.house.exposed().filter((x) => x.entityId.startsWith('lock.')).length
    expect(locks).toBeGreaterThan(40)
    expect(request.targets?.length).toBe(locks)
    expect(request.action.length).toBeLessThanOrEqual(1000)
    core.approver.last().answer({ decision: 'deny', by: 'anna' })
    expect(await done).toMatchObject({ ok: false, code: 'NOC_ERR_DENIED_BY_HUMAN' })
    expect(await w?.tools.call(ctx(), 'intent__HassTurnOn', { name: 'Light 7' })).toMatchObject({
      ok: true,
    })
  })

  it('a refresh while HA is down keeps the last list and says so once; HA back, the list is read again', async () => {
    await open()
    const before = w?.tools.names().length ?? 0
    await w?.ha.stop()
    expect(await w?.homeTools.refresh()).toMatchObject({ ok: false, fault: 'unreachable' })
    expect(await w?.homeTools.refresh()).toMatchObject({ ok: false })
    expect(w?.tools.names().length).toBe(before)
    await w?.ha.start()
    w?.ha.house.remove('script.open_up')
    const back = await w?.homeTools.refresh()
    expect(back, JSON.stringify(back)).toMatchObject({ ok: true })
    expect(w?.tools.names()).not.toContain('script__open_up')
  })

  it('the list is read again on the timer, and soon after HA comes back', async () => {
    const clock = new VirtualClock()
    await open({ clock })
    const homeTools = (w as World).homeTools
    await homeTools.start()
    w?.ha.house.remove('script.open_up')
    await clock.advance(300_000)
    await until(() => !w?.tools.names().includes('script__open_up'))
    await w?.ha.stop()
    await clock.advance(300_000)
    await until(() => homeTools.last?.ok === false)
    await w?.ha.start()
    w?.ha.house.remove('script.movie_night')
    await clock.advance(15_000)
    await until(
      () => homeTools.last?.ok === true && !w?.tools.names().includes('script__movie_night'),
    )
  })
})
