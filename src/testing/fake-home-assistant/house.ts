/**
 * The stand-in Home Assistant's house: its registries (areas, floors, entities with aliases and
 * exposure), its states, and its services, which change states as HA's integrations would. Written
 * from HA core's `helpers/intent.py` (matching), `components/intent/__init__.py` (what HassTurnOn
 * and HassTurnOff do to a lock, a cover, a valve) and `components/websocket_api/commands.py`;
 * docs/home-assistant.md names the version.
 */

export interface FakeArea {
  readonly id: string
  name: string
  aliases: string[]
  floorId?: string
}

export interface FakeFloor {
  readonly id: string
  name: string
  aliases: string[]
}

export interface FakeEntity {
  readonly entityId: string
  name: string
  aliases: string[]
  areaId?: string
  deviceClass?: string
  state: string
  exposed: boolean
  /** A script's description (HA puts it in the tool's description). */
  description?: string
}

export interface ServiceCallRecord {
  readonly domain: string
  readonly service: string
  readonly entityIds: readonly string[]
  readonly data: Record<string, unknown>
  readonly via: 'websocket' | 'intent'
}

export interface StateChange {
  readonly entityId: string
  readonly oldState: string
  readonly newState: string
}

/** A household of lights, a thermostat, locks, a garage door, a water valve and two scripts. */
function exampleHouse(): { areas: FakeArea[]; floors: FakeFloor[]; entities: FakeEntity[] } {
  return {
    floors: [
      { id: 'ground', name: 'Ground Floor', aliases: ['downstairs'] },
      { id: 'first', name: 'First Floor', aliases: ['upstairs'] },
    ],
    areas: [
      { id: 'kitchen', name: 'Kitchen', aliases: [], floorId: 'ground' },
      { id: 'hall', name: 'Hall', aliases: ['hallway', 'entrance'], floorId: 'ground' },
      { id: 'garage', name: 'Garage', aliases: [], floorId: 'ground' },
      { id: 'garden', name: 'Garden', aliases: [], floorId: 'ground' },
      { id: 'bedroom', name: 'Bedroom', aliases: [], floorId: 'first' },
      { id: 'living_room', name: 'Living Room', aliases: ['lounge'], floorId: 'ground' },
    ],
    entities: [
      e('light.kitchen', 'Kitchen Light', 'kitchen', 'off'),
      e('light.kitchen_counter', 'Counter Lights', 'kitchen', 'off'),
      e('light.hall', 'Hall Light', 'hall', 'on'),
      e('light.bedroom_lamp', 'Lamp', 'bedroom', 'off'),
      e('light.living_room_lamp', 'Lamp', 'living_room', 'off'),
      e('climate.thermostat', 'Thermostat', 'hall', 'heat'),
      { ...e('lock.front_door', 'Front Door', 'hall', 'locked'), aliases: ['main door'] },
      e('lock.back_door', 'Back Door', 'garden', 'locked'),
      { ...e('cover.garage_door', 'Garage Door', 'garage', 'closed'), deviceClass: 'garage' },
      { ...e('cover.kitchen_blind', 'Kitchen Blind', 'kitchen', 'closed'), deviceClass: 'blind' },
      { ...e('valve.garden_water', 'Garden Water', 'garden', 'closed'), deviceClass: 'water' },
      {
        ...e('script.movie_night', 'Movie Night', 'living_room', 'off'),
        description: 'Dims the lights and starts the TV',
      },
      {
        ...e('script.open_up', 'Open Up', 'hall', 'off'),
        description: 'Opens the garage and unlocks the back door',
      },
      e('todo.shopping_list', 'Shopping List', undefined, '0'),
      // Not exposed to Assist: the speaker must never see or touch it.
      { ...e('lock.safe', 'Safe', 'bedroom', 'locked'), exposed: false },
    ],
  }
}

function e(entityId: string, name: string, areaId: string | undefined, state: string): FakeEntity {
  return { entityId, name, aliases: [], ...(areaId && { areaId }), state, exposed: true }
}

export const domainOf = (entityId: string): string => entityId.slice(0, entityId.indexOf('.'))

const norm = (s: string) => s.normalize('NFKC').toLowerCase().trim().replace(/\s+/g, ' ')

/** Why a match failed, as HA's `MatchFailedReason` names it. */
export type MatchFailure =
  | 'NAME'
  | 'AREA'
  | 'FLOOR'
  | 'DOMAIN'
  | 'DEVICE_CLASS'
  | 'DUPLICATE_NAME'
  | 'INVALID_AREA'
  | 'INVALID_FLOOR'

export interface MatchSlots {
  name?: string
  area?: string
  floor?: string
  domain?: string[]
  device_class?: string[]
}

export class FakeHouse {
  readonly areas: FakeArea[]
  readonly floors: FakeFloor[]
  readonly entities: FakeEntity[]
  readonly calls: ServiceCallRecord[] = []
  /** How long a service takes to show in the state (a garage door runs for a while). */
  actuationMs = 0
  /** Services that fail with this message instead (e.g. a jammed lock). */
  readonly failing = new Map<string, string>()
  /** Entities that accept every service and never change (a lock whose radio dropped out). */
  readonly stuck = new Set<string>()
  #listeners = new Set<(c: StateChange) => void>()

  constructor(init = exampleHouse()) {
    this.areas = init.areas
    this.floors = init.floors
    this.entities = init.entities
  }

  onChange(fn: (c: StateChange) => void): () => void {
    this.#listeners.add(fn)
    return () => this.#listeners.delete(fn)
  }

  entity(id: string): FakeEntity | undefined {
    return this.entities.find((x) => x.entityId === id)
  }

  exposed(): FakeEntity[] {
    return this.entities.filter((x) => x.exposed)
  }

  /** Renames an entity, as a person would in HA's settings; HA sends a state_changed for it. */
  rename(id: string, name: string): void {
    const ent = this.entity(id)
    if (!ent) throw new Error(`no entity ${id}`)
    ent.name = name
    this.#emit({ entityId: id, oldState: ent.state, newState: ent.state })
  }

  remove(id: string): void {
    const at = this.entities.findIndex((x) => x.entityId === id)
    if (at >= 0) this.entities.splice(at, 1)
  }

  setState(id: string, state: string): void {
    const ent = this.entity(id)
    if (!ent) return
    const old = ent.state
    ent.state = state
    this.#emit({ entityId: id, oldState: old, newState: state })
  }

  /**
   * `helpers/intent.py` `async_match_targets`, reduced to what Assist's tools pass: exposed
   * entities only; name by id, name or alias; area and floor by id, name or alias; domain and
   * device class as constraints; a name matching several entities fails as a duplicate.
   */
  match(
    slots: MatchSlots,
  ): { ok: true; entities: FakeEntity[] } | { ok: false; reason: MatchFailure } {
    let found = this.exposed()
    if (slots.domain?.length) {
      found = found.filter((x) => slots.domain?.includes(domainOf(x.entityId)))
      if (found.length === 0) return { ok: false, reason: 'DOMAIN' }
    }
    if (slots.device_class?.length) {
      found = found.filter((x) => x.deviceClass && slots.device_class?.includes(x.deviceClass))
      if (found.length === 0) return { ok: false, reason: 'DEVICE_CLASS' }
    }
    if (slots.floor) {
      const f = this.floors.find((x) =>
        [x.id, x.name, ...x.aliases].some((n) => norm(n) === norm(slots.floor as string)),
      )
      if (!f) return { ok: false, reason: 'INVALID_FLOOR' }
      const inFloor = new Set(this.areas.filter((a) => a.floorId === f.id).map((a) => a.id))
      found = found.filter((x) => x.areaId && inFloor.has(x.areaId))
      if (found.length === 0) return { ok: false, reason: 'FLOOR' }
    }
    if (slots.area) {
      const a = this.areas.find((x) =>
        [x.id, x.name, ...x.aliases].some((n) => norm(n) === norm(slots.area as string)),
      )
      if (!a) return { ok: false, reason: 'INVALID_AREA' }
      found = found.filter((x) => x.areaId === a.id)
      if (found.length === 0) return { ok: false, reason: 'AREA' }
    }
    if (slots.name) {
      const w = norm(slots.name)
      found = found.filter((x) => [x.entityId, x.name, ...x.aliases].some((n) => norm(n) === w))
      if (found.length === 0) return { ok: false, reason: 'NAME' }
      if (found.length > 1) return { ok: false, reason: 'DUPLICATE_NAME' }
    }
    return { ok: true, entities: found }
  }

  /**
   * Runs a service on entities, as HA's integrations do: a lock locks, a cover opens (after
   * `actuationMs`, passing through `opening`), a light turns on. Throws HA's message when the
   * service does not exist for the entity, or is set to fail.
   */
  callService(
    domain: string,
    service: string,
    entityIds: readonly string[],
    data: Record<string, unknown>,
    via: ServiceCallRecord['via'],
  ): void {
    const key = `${domain}.${service}`
    const failing = this.failing.get(key)
    this.calls.push({ domain, service, entityIds: [...entityIds], data, via })
    if (failing) throw new Error(failing)
    for (const id of entityIds) {
      const ent = this.entity(id)
      if (!ent) throw new Error(`Entity ${id} not found`)
      const target = nextState(domain, service, ent, data)
      if (target === undefined) throw new Error(`Service ${key} does not support entity ${id}`)
      if (this.stuck.has(id)) continue
      const [moving, final] = target
      if (moving && this.actuationMs > 0) {
        this.setState(id, moving)
        setTimeout(() => this.setState(id, final), this.actuationMs)
      } else if (this.actuationMs > 0) {
        setTimeout(() => this.setState(id, final), this.actuationMs)
      } else {
        this.setState(id, final)
      }
    }
  }

  #emit(c: StateChange): void {
    for (const fn of this.#listeners) fn(c)
  }
}

/** [state while moving, final state] for a service on an entity, or undefined when unsupported. */
function nextState(
  domain: string,
  service: string,
  ent: FakeEntity,
  data: Record<string, unknown>,
): [string | undefined, string] | undefined {
  const d = domainOf(ent.entityId)
  if (domain === 'homeassistant') return nextState(d, service, ent, data)
  if (domain !== d) return undefined
  switch (`${d}.${service}`) {
    case 'lock.lock':
      return ['locking', 'locked']
    case 'lock.unlock':
      return ['unlocking', 'unlocked']
    case 'cover.open_cover':
      return ['opening', 'open']
    case 'cover.close_cover':
      return ['closing', 'closed']
    case 'cover.set_cover_position':
      return Number(data.position) > 0 ? ['opening', 'open'] : ['closing', 'closed']
    case 'valve.open_valve':
      return ['opening', 'open']
    case 'valve.close_valve':
      return ['closing', 'closed']
    case 'script.turn_on':
      return [undefined, 'off']
    case 'climate.set_temperature':
      return [undefined, ent.state]
  }
  if (service === 'turn_on' && ['light', 'switch', 'fan', 'media_player'].includes(d))
    return [undefined, 'on']
  if (service === 'turn_off' && ['light', 'switch', 'fan', 'media_player'].includes(d))
    return [undefined, 'off']
  return undefined
}

/**
 * A large house for load: `n` exposed entities over 20 areas — lights mostly, every tenth a lock,
 * every twentieth a switch — plus the example house's own, so its names still resolve.
 */
export function largeHouse(n: number): FakeHouse {
  const base = exampleHouse()
  const areas = [...base.areas]
  for (let a = 0; a < 20; a++)
    areas.push({ id: `room_${a}`, name: `Room ${a}`, aliases: [], floorId: 'first' })
  const entities = [...base.entities]
  for (let i = 0; entities.length < n; i++) {
    const domain = i % 10 === 0 ? 'lock' : i % 20 === 5 ? 'switch' : 'light'
    entities.push({
      entityId: `${domain}.item_${i}`,
      name: `${domain === 'lock' ? 'Lock' : domain === 'switch' ? 'Plug' : 'Light'} ${i}`,
      aliases: [],
      areaId: `room_${i % 20}`,
      state: domain === 'lock' ? 'locked' : 'off',
      exposed: true,
    })
  }
  return new FakeHouse({ areas, floors: base.floors, entities })
}
