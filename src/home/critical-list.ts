import type { HomeEntity, HomeSnapshot } from '../ports/home.js'
import { actionFor } from './actions.js'
import { type CriticalPolicy, isCritical } from './criticality.js'
import type { HomeIntent } from './intents.js'

export interface CriticalEntity {
  readonly entity: HomeEntity
  /** What a phone's yes would be asked for: "Unlock", "Open", "Run". */
  readonly verbs: readonly string[]
}

const INTENTS: readonly HomeIntent[] = ['turn_on', 'turn_off', 'script']

/** Every exposed entity some call would need a phone's yes for, under `policy`, and for what. */
export function criticalEntities(home: HomeSnapshot, policy: CriticalPolicy): CriticalEntity[] {
  const out: CriticalEntity[] = []
  for (const entity of home.entities) {
    const verbs = new Set<string>()
    for (const intent of INTENTS) {
      if (intent === 'script' && entity.domain !== 'script') continue
      const action = actionFor(intent, entity, {})
      if (isCritical(action, entity, policy)) verbs.add(action.verb)
    }
    if (verbs.size > 0) out.push({ entity, verbs: [...verbs] })
  }
  return out
}
