import { describe, expect, it } from 'vitest'
import { ToolSet } from '../../src/core/tool-set.js'
import type { Tool } from '../../src/core/types.js'
import { actionFor } from '../../src/home/actions.js'
import { DEFAULT_CRITICAL_POLICY, isCritical } from '../../src/home/criticality.js'
import { fitSchema } from '../../src/home/fit-schema.js'
import { intentOf, splitToolName } from '../../src/home/intents.js'
import { resolveTargets } from '../../src/home/resolve.js'
import type { HomeEntity, HomeSnapshot } from '../../src/ports/home.js'

const ent = (
  entityId: string,
  name: string,
  areaId?: string,
  deviceClass?: string,
): HomeEntity => ({
  entityId,
  name,
  aliases: [],
  domain: entityId.split('.')[0] as string,
  ...(areaId && { areaId }),
  ...(deviceClass && { deviceClass }),
  state: 'off',
})

const home: HomeSnapshot = {
  floors: [{ id: 'up', name: 'Upstairs', aliases: ['first floor'] }],
  areas: [
    { id: 'hall', name: 'Hall', aliases: ['entrance'] },
    { id: 'bed', name: 'Bedroom', aliases: [], floorId: 'up' },
  ],
  entities: [
    { ...ent('lock.front_door', 'Front Door', 'hall'), aliases: ['Main Door'] },
    ent('lock.shed', 'Shed', undefined),
    ent('cover.garage', 'Garage', 'hall', 'garage'),
    ent('cover.blind', 'Blind', 'bed', 'blind'),
    ent('valve.water', 'Water', 'hall', 'water'),
    ent('light.lamp', 'Lamp', 'bed'),
    ent('script.party', 'Party', undefined),
    ent('alarm_control_panel.home', 'Alarm', 'hall'),
  ],
}

const critical = (
  intent: Parameters<typeof actionFor>[0],
  id: string,
  args = {},
  policy = DEFAULT_CRITICAL_POLICY,
) => {
  const e = home.entities.find((x) => x.entityId === id) as HomeEntity
  return isCritical(actionFor(intent, e, args), e, policy)
}

describe('what a call can touch, resolved as HA would', () => {
  it('names by friendly name, alias or id, case-folded; areas by alias; floors; a domain alone is every one', () => {
    const ids = (r: ReturnType<typeof resolveTargets>) =>
      r.kind === 'unresolved' ? r.why : r.entities.map((e) => e.entityId)
    expect(ids(resolveTargets(home, { name: '  main  DOOR ' }))).toEqual(['lock.front_door'])
    expect(ids(resolveTargets(home, { name: 'lock.shed' }))).toEqual(['lock.shed'])
    expect(ids(resolveTargets(home, { area: 'entrance', domain: ['lock'] }))).toEqual([
      'lock.front_door',
    ])
    expect(ids(resolveTargets(home, { floor: 'first floor' }))).toEqual([
      'cover.blind',
      'light.lamp',
    ])
    expect(ids(resolveTargets(home, { domain: ['lock'] }))).toEqual([
      'lock.front_door',
      'lock.shed',
    ])
    expect(ids(resolveTargets(home, { deviceClass: ['garage'] }))).toEqual(['cover.garage'])
    expect(resolveTargets(home, { name: 'Garage Door' })).toMatchObject({ kind: 'unresolved' })
    expect(resolveTargets(home, { area: 'Cellar' })).toMatchObject({
      kind: 'unresolved',
      why: 'no area called Cellar',
    })
  })

  it('critical by default: unlock, open an entrance or a valve, disarm, a script not marked safe — never lock, close, a blind, a light', () => {
    expect(critical('turn_off', 'lock.front_door')).toBe(true)
    expect(critical('turn_on', 'lock.front_door')).toBe(false)
    expect(critical('turn_on', 'cover.garage')).toBe(true)
    expect(critical('turn_off', 'cover.garage')).toBe(false)
    expect(critical('set_position', 'cover.garage', { position: 5 })).toBe(true)
    expect(critical('set_position', 'cover.garage', { position: 0 })).toBe(false)
    expect(critical('turn_on', 'cover.blind')).toBe(false)
    expect(critical('turn_on', 'valve.water')).toBe(true)
    expect(critical('turn_off', 'alarm_control_panel.home')).toBe(true)
    expect(critical('unlock', 'lock.front_door')).toBe(true)
    expect(critical('open', 'cover.garage')).toBe(true)
    expect(critical('script', 'script.party')).toBe(true)
    expect(
      critical(
        'script',
        'script.party',
        {},
        { ...DEFAULT_CRITICAL_POLICY, safeScripts: ['script.party'] },
      ),
    ).toBe(false)
    expect(critical('turn_on', 'light.lamp')).toBe(false)
  })

  it('overrides per domain, device class and entity; the most specific wins', () => {
    const policy = {
      ...DEFAULT_CRITICAL_POLICY,
      domains: { light: 'critical' as const, lock: 'one-shot' as const },
      deviceClasses: { 'cover.blind': 'critical' as const },
      entities: { 'lock.front_door': 'critical' as const },
    }
    expect(critical('turn_on', 'light.lamp', {}, policy)).toBe(true)
    expect(critical('turn_off', 'lock.shed', {}, policy)).toBe(false)
    expect(critical('turn_off', 'lock.front_door', {}, policy)).toBe(true)
    expect(critical('turn_on', 'cover.blind', {}, policy)).toBe(true)
  })

  it('tool names with and without the 2026.9 domain prefix mean the same; unknown tools are unknown', () => {
    const scripts = new Set(['party'])
    expect(splitToolName('intent__HassTurnOff')).toEqual({ domain: 'intent', bare: 'HassTurnOff' })
    expect(intentOf('intent__HassTurnOff', scripts)).toBe('turn_off')
    expect(intentOf('HassTurnOff', scripts)).toBe('turn_off')
    expect(intentOf('script__party', scripts)).toBe('script')
    expect(intentOf('party', scripts)).toBe('script')
    expect(intentOf('lock__HassUnlock', scripts)).toBe('unlock')
    expect(intentOf('homeassistant__GetLiveContext', scripts)).toBe('read')
    expect(intentOf('vacuum__HassSelfDestruct', scripts)).toBe('unknown')
  })

  it('schemas: a string-or-list becomes a list, formats and unknown keywords go, descriptions stay', () => {
    expect(
      fitSchema({
        type: 'object',
        properties: {
          domain: {
            anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
            description: 'One or more.',
          },
          rgb: {
            type: 'array',
            items: { type: 'number' },
            minItems: 3,
            maxItems: 3,
            format: 'RGB',
          },
          when: { type: 'string', format: 'date-time' },
          n: { type: ['integer', 'null'], minimum: 0 },
        },
        required: ['when', 'missing'],
      }),
    ).toEqual({
      type: 'object',
      properties: {
        domain: { type: 'array', items: { type: 'string' }, description: 'One or more.' },
        rgb: { type: 'array', items: { type: 'number' }, maxItems: 3 },
        when: { type: 'string', description: '(date-time)' },
        n: { type: 'integer', minimum: 0 },
      },
      required: ['when'],
    })
    expect(fitSchema('junk')).toEqual({ type: 'object', properties: {} })
  })
})

describe('the ToolSet holds a home’s tools as one replaceable source', () => {
  const tool = (name: string, description = name): Tool => ({
    name,
    description,
    parameters: { type: 'object' },
    call: async () => description,
  })

  it('a refresh replaces the home’s tools, refuses a built-in’s name, and a session’s snapshot keeps what it opened with', () => {
    const set = new ToolSet([tool('current_time')])
    expect(set.replaceSource('home', [tool('a'), tool('current_time', 'shadow')])).toEqual([
      'current_time',
    ])
    const session = set.snapshot()
    expect(set.replaceSource('home', [tool('b')])).toEqual([])
    expect(set.names()).toEqual(['current_time', 'b'])
    expect(session.names()).toEqual(['current_time', 'a'])
    expect(set.get('current_time')?.description).toBe('current_time')
  })
})
