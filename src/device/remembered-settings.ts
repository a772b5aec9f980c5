import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from '../ports/clock.js'
import type { SettingsStore } from '../ports/settings-store.js'
import { isSensitivity, type Sensitivity } from '../protocol/sensitivity.js'
import {
  clampVolume,
  DEFAULT_SENSITIVITY,
  DEFAULT_VOLUME,
  type DeviceSnapshot,
  type DeviceState,
} from './device-state.js'

/**
 * A device setting the store remembers across restarts: its one home in the store (`key`), the
 * change of the device's state that writes it, how the stored text reads back, and what a
 * household is told when it does not.
 */
interface RememberedSetting<T> {
  readonly key: string
  readonly change: 'volume' | 'sensitivity'
  readonly fallback: T
  /** The stored text as a value, or undefined when it cannot be one. */
  parse(raw: string): T | undefined
  read(snapshot: DeviceSnapshot): string
  /** Said when the stored text is unreadable and the fallback is used. */
  readonly unreadable: string
  readonly label: string
}

export const VOLUME: RememberedSetting<number> = {
  key: 'volume',
  change: 'volume',
  fallback: DEFAULT_VOLUME,
  parse: (raw) => {
    const n = Number(raw)
    return raw.trim() === '' || !Number.isFinite(n) ? undefined : clampVolume(n)
  },
  read: (s) => String(s.volume),
  unreadable: `the stored volume is not a number; using ${DEFAULT_VOLUME} %`,
  label: 'volume',
}

export const SENSITIVITY: RememberedSetting<Sensitivity> = {
  key: 'wake_sensitivity',
  change: 'sensitivity',
  fallback: DEFAULT_SENSITIVITY,
  parse: (raw) => (isSensitivity(raw) ? raw : undefined),
  read: (s) => s.sensitivity,
  unreadable: `the stored wake sensitivity is not low, normal or high; using ${DEFAULT_SENSITIVITY}`,
  label: 'wake sensitivity',
}

/** The value the store remembers, or the setting's fallback (nothing stored, or unreadable). */
export function remembered<T>(
  setting: RememberedSetting<T>,
  store: SettingsStore,
  logger: Logger,
): T {
  const raw = store.getSetting(setting.key)
  if (raw === undefined) return setting.fallback
  const value = setting.parse(raw)
  if (value !== undefined) return value
  logger.warn({ event: 'setting_unreadable', setting: setting.key }, setting.unreadable)
  return setting.fallback
}

/**
 * Writes every change of the setting to the store, so a restart keeps it. A store that cannot be
 * written (a full disk) leaves the setting working as set until the next start; the log says why.
 */
export function remember<T>(
  setting: RememberedSetting<T>,
  device: DeviceState,
  store: SettingsStore,
  clock: Clock,
  logger: Logger,
): () => void {
  return device.subscribe((snapshot, change) => {
    if (change.kind !== setting.change) return
    try {
      store.setSetting(setting.key, setting.read(snapshot), clock.now())
    } catch (err) {
      logger.warn(
        { event: 'setting_not_saved', setting: setting.key, err: errorText(err) },
        `${setting.label} not remembered`,
      )
    }
  })
}
