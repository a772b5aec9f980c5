import type { HomeEntity, HomeSnapshot } from '../ports/home.js'

/** The target slots of HA's intents (helpers/intent.py, `DynamicServiceIntentHandler.slot_schema`). */
export interface TargetSlots {
  readonly name?: string | undefined
  readonly area?: string | undefined
  readonly floor?: string | undefined
  readonly domain?: readonly string[] | undefined
  readonly deviceClass?: readonly string[] | undefined
}

export type Resolution =
  /** Every entity the call can touch (one, or a sweep by area, floor or domain). */
  | { readonly kind: 'matched'; readonly entities: readonly HomeEntity[] }
  /** A name that matches more than one entity, not settled by an area. */
  | { readonly kind: 'ambiguous'; readonly entities: readonly HomeEntity[] }
  /** Nothing the speaker knows of matches; `why` says which slot failed. */
  | { readonly kind: 'unresolved'; readonly why: string }

/** Names compare as HA compares them: case-folded, trimmed, inner spaces collapsed. */
export function normalName(s: string): string {
  return s.normalize('NFKC').toLowerCase().trim().replace(/\s+/g, ' ')
}

/** An area or entity answers to its id, its name and each of its aliases. */
function answersTo(names: readonly string[], wanted: string): boolean {
  const w = normalName(wanted)
  return names.some((n) => normalName(n) === w)
}

/**
 * Which exposed entities a call's slots match, as HA's `async_match_targets` would: a name by
 * entity id, friendly name or alias; an area or floor by name, id or alias; `domain` and
 * `device_class` as constraints — so a domain alone means every exposed entity of that domain.
 */
export function resolveTargets(home: HomeSnapshot, slots: TargetSlots): Resolution {
  let candidates = home.entities
  if (slots.domain && slots.domain.length > 0) {
    const domains = new Set(slots.domain.map(normalName))
    candidates = candidates.filter((e) => domains.has(e.domain))
    if (candidates.length === 0) {
      return { kind: 'unresolved', why: `no exposed device of kind ${slots.domain.join(', ')}` }
    }
  }
  if (slots.deviceClass && slots.deviceClass.length > 0) {
    const classes = new Set(slots.deviceClass.map(normalName))
    candidates = candidates.filter((e) => e.deviceClass !== undefined && classes.has(e.deviceClass))
    if (candidates.length === 0) {
      return { kind: 'unresolved', why: `no exposed ${slots.deviceClass.join(', ')}` }
    }
  }
  if (slots.floor !== undefined) {
    const floor = home.floors.find(
      (f) =>
        normalName(f.id) === normalName(slots.floor as string) ||
        normalName(f.name) === normalName(slots.floor as string) ||
        f.aliases.some((a) => normalName(a) === normalName(slots.floor as string)),
    )
    if (!floor) return { kind: 'unresolved', why: `no floor called ${slots.floor}` }
    const areas = new Set(home.areas.filter((a) => a.floorId === floor.id).map((a) => a.id))
    candidates = candidates.filter((e) => e.areaId !== undefined && areas.has(e.areaId))
  }
  if (slots.area !== undefined) {
    const areas = home.areas.filter((a) =>
      answersTo([a.id, a.name, ...a.aliases], slots.area as string),
    )
    if (areas.length === 0) return { kind: 'unresolved', why: `no area called ${slots.area}` }
    const ids = new Set(areas.map((a) => a.id))
    candidates = candidates.filter((e) => e.areaId !== undefined && ids.has(e.areaId))
  }
  if (slots.name !== undefined) {
    const named = candidates.filter((e) =>
      answersTo([e.entityId, e.name, ...e.aliases], slots.name as string),
    )
    if (named.length === 0) return { kind: 'unresolved', why: `nothing called ${slots.name}` }
    if (named.length > 1) return { kind: 'ambiguous', entities: named }
    return { kind: 'matched', entities: named }
  }
  if (candidates.length === 0) return { kind: 'unresolved', why: 'nothing matches' }
  return { kind: 'matched', entities: candidates }
}

/** The slots of a call's arguments, tolerant of HA's "a string or a list" for domain and class. */
export function slotsOf(args: Record<string, unknown>): TargetSlots {
  const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v : undefined)
  const list = (v: unknown) =>
    typeof v === 'string'
      ? [v]
      : Array.isArray(v)
        ? v.filter((x): x is string => typeof x === 'string')
        : undefined
  return {
    name: str(args.name),
    area: str(args.area),
    floor: str(args.floor),
    domain: list(args.domain),
    deviceClass: list(args.device_class),
  }
}
