import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from '../ports/clock.js'
import type { SettingsStore } from '../ports/settings-store.js'
import {
  DEFAULT_SENSITIVITY,
  type DeviceState,
  isSensitivity,
  type Sensitivity,
} from './device-state.js'

/** The wake sensitivity's one home in the store (beside the volume, remembered-volume.ts). */
const SENSITIVITY_SETTING = 'wake_sensitivity'

/** The sensitivity the store remembers, or DEFAULT_SENSITIVITY (nothing stored, or unreadable). */
export function rememberedSensitivity(store: SettingsStore, logger: Logger): Sensitivity {
  const raw = store.getSetting(SENSITIVITY_SETTING)
  if (raw === undefined) return DEFAULT_SENSITIVITY
  if (!isSensitivity(raw)) {
    logger.warn(
      { event: 'setting_unreadable', setting: SENSITIVITY_SETTING },
      `the stored wake sensitivity is not low, normal or high; using ${DEFAULT_SENSITIVITY}`,
    )
    return DEFAULT_SENSITIVITY
  }
  return raw
}

/**
 * Writes every sensitivity change to the store, so a restart keeps it. A store that cannot be
 * written leaves the sensitivity working as set until the next start; the store says why.
 */
export function rememberSensitivity(
  device: DeviceState,
  store: SettingsStore,
  clock: Clock,
  logger: Logger,
): () => void {
  return device.subscribe((snapshot, change) => {
    if (change.kind !== 'sensitivity') return
    try {
      store.setSetting(SENSITIVITY_SETTING, snapshot.sensitivity, clock.now())
    } catch (err) {
      logger.warn(
        { event: 'setting_not_saved', err: errorText(err) },
        'wake sensitivity not remembered',
      )
    }
  })
}
