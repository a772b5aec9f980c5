/**
 * What a Home Assistant tool does, read from its name. HA serves its Assist intents under their
 * own names before 2026.9 (`HassTurnOff`) and with their owning domain after (`intent__HassTurnOff`,
 * `light__HassLightSet`); scripts come as `script__<id>` or plain `<id>`. Both forms mean the same.
 */
export type HomeIntent =
  /** HassTurnOn: on; for a lock, lock; for a cover or valve, open (HA's components/intent). */
  | 'turn_on'
  /** HassTurnOff: off; for a lock, unlock; for a cover or valve, close. */
  | 'turn_off'
  | 'set_position'
  | 'lock'
  | 'unlock'
  | 'open'
  | 'close'
  /** Changes a setting of what it matches (brightness, temperature, volume…): never opens anything. */
  | 'adjust'
  /** Reads state or lists; touches nothing. */
  | 'read'
  /** Runs an exposed script. */
  | 'script'
  /** A tool this speaker does not know: treated as able to do anything. */
  | 'unknown'

const BY_NAME: Readonly<Record<string, HomeIntent>> = {
  HassTurnOn: 'turn_on',
  HassTurnOff: 'turn_off',
  HassSetPosition: 'set_position',
  // The family proposed in core PR #181680: named by what they do, so a gate keyed on names misses them.
  HassLock: 'lock',
  HassUnlock: 'unlock',
  HassOpen: 'open',
  HassClose: 'close',
  HassStopMoving: 'adjust',
  HassLightSet: 'adjust',
  HassClimateSetTemperature: 'adjust',
  HassFanSetSpeed: 'adjust',
  HassMediaPause: 'adjust',
  HassMediaUnpause: 'adjust',
  HassMediaNext: 'adjust',
  HassMediaPrevious: 'adjust',
  HassSetVolume: 'adjust',
  HassSetVolumeRelative: 'adjust',
  HassMediaPlayerMute: 'adjust',
  HassMediaPlayerUnmute: 'adjust',
  HassMediaSearchAndPlay: 'adjust',
  HassListAddItem: 'adjust',
  HassListCompleteItem: 'adjust',
  HassBroadcast: 'adjust',
  HassVacuumStart: 'adjust',
  HassVacuumReturnToBase: 'adjust',
  GetLiveContext: 'read',
  GetDateTime: 'read',
  GetCurrentLocation: 'read',
  HassGetState: 'read',
  HassGetWeather: 'read',
  get_items: 'read',
  todo_get_items: 'read',
  get_events: 'read',
  calendar_get_events: 'read',
}

export interface ToolName {
  /** The owning domain from a 2026.9 name (`intent`, `light`, `script`…), when there is one. */
  readonly domain?: string
  /** The name without it: `HassTurnOff`, or a script's id. */
  readonly bare: string
}

/** Splits `intent__HassTurnOff` into its domain and `HassTurnOff`; an unprefixed name stays whole. */
export function splitToolName(name: string): ToolName {
  const at = name.indexOf('__')
  if (at <= 0) return { bare: name }
  return { domain: name.slice(0, at), bare: name.slice(at + 2) }
}

/**
 * The intent of a tool. A script is known by its `script__` prefix, or (before 2026.9) by being
 * one of the exposed scripts' ids.
 */
export function intentOf(name: string, scriptIds: ReadonlySet<string>): HomeIntent {
  const { domain, bare } = splitToolName(name)
  if (domain === 'script') return 'script'
  const known = BY_NAME[bare]
  if (known) return known
  if (domain === undefined && scriptIds.has(bare.replace(/^_(?=\d)/, ''))) return 'script'
  return 'unknown'
}
