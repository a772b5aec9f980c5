import type { HomeEntity } from '../ports/home.js'
import type { HomeIntent } from './intents.js'

/** What a call does to one entity, in words and as the exact service call that does it. */
export interface EntityAction {
  /** The verb a person reads: "Unlock", "Open", "Turn on". */
  readonly verb: string
  /** What it is, for the critical rule: opening and unlocking are the dangerous kinds. */
  readonly kind: 'unlock' | 'lock' | 'open' | 'close' | 'on' | 'off' | 'position' | 'run' | 'adjust'
  /** The service that does exactly this, or none when only the home's own tool can. */
  readonly service?: {
    readonly domain: string
    readonly service: string
    readonly data?: Record<string, unknown>
  }
  /** The states that confirm it happened (`opening` counts for a garage that takes a minute). */
  readonly expect?: readonly string[]
}

const OPENS = new Set(['cover', 'valve'])
const ON_OFF = new Set(['light', 'switch', 'fan', 'input_boolean', 'siren', 'humidifier'])

/**
 * The action HA's intent handlers take on an entity (homeassistant/components/intent/__init__.py:
 * `OnOffIntentHandler` maps lock → lock/unlock and cover, valve → open/close;
 * `SetPositionIntentHandler` sets a cover's or valve's position; everything else turns on or off).
 */
export function actionFor(
  intent: HomeIntent,
  entity: HomeEntity,
  args: Readonly<Record<string, unknown>>,
): EntityAction {
  const d = entity.domain
  // As HA's intent falls back to it: `homeassistant.turn_on` reaches each domain's own turn_on.
  const on = (kind: 'on' | 'off'): EntityAction =>
    d === 'script' || d === 'scene'
      ? { verb: 'Run', kind: 'run', service: { domain: d, service: 'turn_on' } }
      : {
          verb: kind === 'on' ? 'Turn on' : 'Turn off',
          kind,
          service: { domain: 'homeassistant', service: kind === 'on' ? 'turn_on' : 'turn_off' },
          // Only where the state is itself on/off: a thermostat turned on shows "heat".
          ...(ON_OFF.has(d) && { expect: [kind] }),
        }
  const lock = (locking: boolean): EntityAction => ({
    verb: locking ? 'Lock' : 'Unlock',
    kind: locking ? 'lock' : 'unlock',
    service: { domain: 'lock', service: locking ? 'lock' : 'unlock' },
    expect: locking ? ['locked', 'locking'] : ['unlocked', 'unlocking', 'open'],
  })
  const open = (opening: boolean): EntityAction => ({
    verb: opening ? 'Open' : 'Close',
    kind: opening ? 'open' : 'close',
    service: {
      domain: d,
      service: `${opening ? 'open' : 'close'}_${d === 'valve' ? 'valve' : 'cover'}`,
    },
    expect: opening ? ['open', 'opening'] : ['closed', 'closing'],
  })
  switch (intent) {
    case 'turn_on':
      if (d === 'lock') return lock(true)
      if (OPENS.has(d)) return open(true)
      return on('on')
    case 'turn_off':
      if (d === 'lock') return lock(false)
      if (OPENS.has(d)) return open(false)
      if (d === 'alarm_control_panel') return { verb: 'Disarm', kind: 'unlock' }
      return on('off')
    case 'lock':
      return lock(true)
    case 'unlock':
      return d === 'lock' ? lock(false) : { verb: 'Unlock', kind: 'unlock' }
    case 'open':
      return OPENS.has(d) ? open(true) : { verb: 'Open', kind: 'open' }
    case 'close':
      return OPENS.has(d) ? open(false) : { verb: 'Close', kind: 'close' }
    case 'set_position': {
      const position = Number(args.position)
      if (!OPENS.has(d) || !Number.isFinite(position)) return { verb: 'Set', kind: 'adjust' }
      // Any position above closed opens it: a garage "set to 10" is open enough to crawl under.
      return {
        verb: position > 0 ? `Open to ${position}%` : 'Close',
        kind: position > 0 ? 'open' : 'close',
        service: {
          domain: d,
          service: d === 'valve' ? 'set_valve_position' : 'set_cover_position',
          data: { position },
        },
        expect: position > 0 ? ['open', 'opening'] : ['closed', 'closing'],
      }
    }
    case 'script':
      return { verb: 'Run', kind: 'run', service: { domain: 'script', service: 'turn_on' } }
    case 'adjust':
      return { verb: 'Change', kind: 'adjust' }
    default:
      return { verb: 'Change', kind: 'adjust' }
  }
}
