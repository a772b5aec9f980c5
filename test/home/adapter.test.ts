import { afterEach, describe, expect, it } from 'vitest'
import { openHome } from '../../src/app/compose/open-home.js'
import { ServerFault } from '../../src/ports/tool-server.js'
import { FakeHomeAssistant } from '../../src/testing/fake-home-assistant/server.js'

const TOKEN = 'ha-token-not-for-logs'
let ha: FakeHomeAssistant
let home: ReturnType<typeof openHome>

async function world(naming: '2026.9' | 'legacy' = '2026.9') {
  ha = await FakeHomeAssistant.start({ token: TOKEN, naming })
  home = openHome(ha.url, () => TOKEN, 2000)
}

afterEach(async () => {
  await home?.close()
  await ha?.stop()
})

const faultOf = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (err) {
    return err instanceof ServerFault ? err.kind : `not a fault: ${String(err)}`
  }
  return 'no fault'
}

describe('the Home Assistant adapter against the stand-in HA', () => {
  it('lists the Assist tools over MCP with 2026.9 names, and the legacy names from an older HA', async () => {
    await world()
    const names = (await home.listTools()).map((t) => t.name)
    expect(names).toContain('intent__HassTurnOn')
    expect(names).toContain('homeassistant__GetLiveContext')
    expect(names).toContain('script__movie_night')
    await ha.stop()
    ha.naming = 'legacy'
    await ha.start()
    const legacy = (await home.listTools()).map((t) => t.name)
    expect(legacy).toContain('HassTurnOn')
    expect(legacy).toContain('movie_night')
  })

  it('copies only exposed entities, with aliases and areas, and confirms a service by its state', async () => {
    await world()
    const snap = await home.snapshot()
    const ids = snap.entities.map((e) => e.entityId)
    expect(ids).toContain('lock.front_door')
    expect(ids).not.toContain('lock.safe')
    const door = snap.entities.find((e) => e.entityId === 'lock.front_door')
    expect(door).toMatchObject({
      name: 'Front Door',
      aliases: ['main door'],
      areaId: 'hall',
      state: 'locked',
    })
    expect(snap.entities.find((e) => e.entityId === 'cover.garage_door')?.deviceClass).toBe(
      'garage',
    )
    ha.house.actuationMs = 150
    await home.callService({ domain: 'lock', service: 'unlock', entityIds: ['lock.front_door'] })
    expect(await home.waitForStates({ 'lock.front_door': ['unlocked'] }, 2000)).toBe(true)
    expect(ha.house.calls.map((c) => [c.via, c.domain, c.service, c.entityIds])).toEqual([
      ['websocket', 'lock', 'unlock', ['lock.front_door']],
    ])
    expect(await home.waitForStates({ 'lock.front_door': ['locked'] }, 200)).toBe(false)
  })

  it('a refused service carries HA’s reason; a revoked token, a stopped HA and a slow one are named faults', async () => {
    await world()
    ha.house.failing.set('lock.unlock', 'Lock is jammed')
    await expect(
      home.callService({ domain: 'lock', service: 'unlock', entityIds: ['lock.front_door'] }),
    ).rejects.toThrow('Lock is jammed')
    ha.slow(600)
    const slow = openHome(ha.url, () => TOKEN, 200)
    expect(await faultOf(slow.listTools())).toBe('timeout')
    await slow.close()
    ha.slow(0)
    ha.revokeToken()
    expect(await faultOf(home.listTools())).toBe('unauthorized')
    expect(await faultOf(home.snapshot())).toBe('unauthorized')
    await ha.stop()
    expect(await faultOf(home.listTools())).toBe('unreachable')
    expect(await faultOf(home.snapshot())).toBe('unreachable')
  })

  it('works again after HA restarts', async () => {
    await world()
    await home.snapshot()
    expect((await home.listTools()).length).toBeGreaterThan(3)
    await ha.stop()
    expect(await faultOf(home.snapshot())).toBe('unreachable')
    await ha.start()
    expect((await home.snapshot()).entities.length).toBeGreaterThan(5)
    expect((await home.listTools()).length).toBeGreaterThan(3)
    // Restarted between two reads, with nothing in between to notice: the reads are asked again.
    await ha.stop()
    await ha.start()
    expect((await home.snapshot()).entities.length).toBeGreaterThan(5)
    expect((await home.listTools()).length).toBeGreaterThan(3)
  })
})
