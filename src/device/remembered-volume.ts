import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Clock } from '../ports/clock.js'
import type { SettingsStore } from '../ports/settings-store.js'
import { clampVolume, DEFAULT_VOLUME, type DeviceState } from './device-state.js'

/** The volume's one home in the store. */
const VOLUME_SETTING = 'volume'

/** The volume the store remembers, or DEFAULT_VOLUME (nothing stored, or something unreadable). */
export function rememberedVolume(store: SettingsStore, logger: Logger): number {
  const raw = store.getSetting(VOLUME_SETTING)
  if (raw === undefined) return DEFAULT_VOLUME
  const n = Number(raw)
  if (raw.trim() === '' || !Number.isFinite(n)) {
    logger.warn(
      { event: 'setting_unreadable', setting: VOLUME_SETTING },
      `the stored volume is not a number; using ${DEFAULT_VOLUME} %`,
    )
    return DEFAULT_VOLUME
  }
  return clampVolume(n)
}

/**
 * Writes every volume change to the store, so a restart keeps it. A store that cannot be written
 * (a full disk) leaves the volume working as set until the next start; the store says why.
 */
export function rememberVolume(
  device: DeviceState,
  store: SettingsStore,
  clock: Clock,
  logger: Logger,
): () => void {
  return device.subscribe((snapshot, change) => {
    if (change.kind !== 'volume') return
    try {
      store.setSetting(VOLUME_SETTING, String(snapshot.volume), clock.now())
    } catch (err) {
      logger.warn({ event: 'setting_not_saved', err: errorText(err) }, 'volume not remembered')
    }
  })
}
