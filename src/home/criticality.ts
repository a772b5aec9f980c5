import type { HomeEntity } from '../ports/home.js'
import type { EntityAction } from './actions.js'

/** A household's word on one domain, device class or entity: always ask, or never for that. */
type CriticalOverride = 'critical' | 'one-shot'

export interface CriticalPolicy {
  /** By domain (`lock`), by domain and device class (`cover.garage`), by entity id; most specific wins. */
  readonly domains: Readonly<Record<string, CriticalOverride>>
  readonly deviceClasses: Readonly<Record<string, CriticalOverride>>
  readonly entities: Readonly<Record<string, CriticalOverride>>
  /** Scripts (entity ids) the household marked safe to run without a phone's yes. */
  readonly safeScripts: readonly string[]
}

export const DEFAULT_CRITICAL_POLICY: CriticalPolicy = {
  domains: {},
  deviceClasses: {},
  entities: {},
  safeScripts: [],
}

/** Covers that let someone in when they open. */
const ENTRANCES = new Set(['garage', 'gate', 'door'])

/**
 * Whether this action on this entity needs a phone's yes every time. By default: unlocking,
 * disarming, opening an entrance (a cover of class garage, gate or door) or a valve (water, gas),
 * and running a script not marked safe. Locking, closing, lights, climate and media do not.
 */
export function isCritical(
  action: EntityAction,
  entity: HomeEntity,
  policy: CriticalPolicy,
): boolean {
  const override =
    policy.entities[entity.entityId] ??
    (entity.deviceClass !== undefined
      ? policy.deviceClasses[`${entity.domain}.${entity.deviceClass}`]
      : undefined) ??
    policy.domains[entity.domain]
  if (override !== undefined) return override === 'critical'
  switch (action.kind) {
    case 'unlock':
      return true
    case 'open':
      return (
        entity.domain === 'valve' ||
        (entity.domain === 'cover' && ENTRANCES.has(entity.deviceClass ?? ''))
      )
    case 'run':
      return entity.domain === 'script' && !policy.safeScripts.includes(entity.entityId)
    default:
      return false
  }
}
