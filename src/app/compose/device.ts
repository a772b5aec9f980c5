import type { Persona } from '../../core/persona.js'
import { Announcer } from '../../device/announcer.js'
import { DeviceState } from '../../device/device-state.js'
import { remember, remembered, SENSITIVITY, VOLUME } from '../../device/remembered-settings.js'
import type { AudioOut } from '../../ports/audio.js'
import type { TimerHandle } from '../../ports/clock.js'
import type { SettingsStore } from '../../ports/settings-store.js'
import type { Speech } from '../../ports/speech.js'
import { chimePcm } from '../../tools/chime.js'
import type { DeviceMqtt } from './broker.js'
import type { Composition } from './composition.js'

/** A failing audio device shows `error` until it has run this long without failing again. */
const AUDIO_FAULT_CLEARS_MS = 10_000

/**
 * The device's state, its one owner (docs/architecture.md, "The device's state"): the volume and
 * the wake sensitivity read back from the store and every change written to it.
 */
export function composeDevice({ clock, log }: Composition, store: SettingsStore): DeviceState {
  const deviceLog = log.child({ component: 'device' })
  const device = new DeviceState({
    logger: deviceLog,
    volume: remembered(VOLUME, store, deviceLog),
    sensitivity: remembered(SENSITIVITY, store, deviceLog),
  })
  remember(VOLUME, device, store, clock, deviceLog)
  remember(SENSITIVITY, device, store, clock, deviceLog)
  return device
}

/**
 * The retained status follows the device's state: one place pushes it. The sensitivity is shown
 * only with a wake word (`wakeWord`): without one there is nothing for a phone to tune.
 */
export function showStatus(
  device: DeviceState,
  mqtt: DeviceMqtt | undefined,
  wakeWord: boolean,
): void {
  if (!mqtt) return
  const show = () => {
    const s = device.snapshot
    mqtt.status.setState(s.state, s.muted, s.reason, s.falseWakes)
    mqtt.status.setVolume(s.volume)
    mqtt.status.setSensitivity(wakeWord ? s.sensitivity : undefined)
    mqtt.status.setRefused(s.refused)
    mqtt.status.setProviders(s.providers)
    mqtt.status.setWakeCheck(s.wakeCheck)
  }
  device.subscribe(show)
  show()
}

/**
 * An audio device's failure, as a fault of the device's state: `error` on the LED and the status,
 * cleared once the device has gone AUDIO_FAULT_CLEARS_MS without failing (the backends retry by
 * themselves and say nothing when they succeed).
 */
export function audioFaults({ clock, closers }: Composition, device: DeviceState) {
  let clear: TimerHandle | undefined
  closers.add(() => {
    if (clear) clock.clearTimeout(clear)
  })
  return (message: string) => {
    device.fault('audio', message)
    if (clear) clock.clearTimeout(clear)
    clear = clock.setTimeout(() => {
      clear = undefined
      device.fault('audio', undefined)
    }, AUDIO_FAULT_CLEARS_MS)
  }
}

interface AnnouncerDeps {
  readonly device: DeviceState
  readonly speech: Speech
  readonly persona: Persona
  /** The gain stage: its alert path, and what it still has to play. */
  readonly speaker: AudioOut & { readonly alerts: Pick<AudioOut, 'sampleRateHz' | 'write'> }
}

/** Announcements from the broker (Home Assistant's notify entity), said when the room is free. */
export function composeAnnouncer(
  { clock, log, closers }: Composition,
  { device, speech, persona, speaker }: AnnouncerDeps,
): Announcer {
  let chime: Uint8Array | undefined
  const announcer = new Announcer({
    speech,
    persona,
    sink: speaker.alerts,
    speaker,
    chime: () => {
      chime ??= chimePcm(speaker.sampleRateHz, 1)
      return chime
    },
    device,
    clock,
    logger: log,
  })
  closers.add(() => announcer.close())
  return announcer
}
