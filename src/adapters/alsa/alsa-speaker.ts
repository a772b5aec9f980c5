import { PacedSpeaker } from '../../audio/paced-speaker.js'
import { LIVE_OUTPUT_RATE_HZ } from '../../ports/live-llm.js'
import { AplayDevice, type AplayDeviceOptions } from './aplay-device.js'

/** The paced buffer's lead, tick and stall, and everything aplay takes (aplay-device.ts). */
export interface AlsaSpeakerOptions extends Omit<AplayDeviceOptions, 'sampleRateHz'> {
  readonly sampleRateHz?: number
  readonly leadMs?: number | undefined
  readonly tickMs?: number | undefined
  readonly stallMs?: number | undefined
}

/**
 * The speaker on ALSA: Nocturn's paced buffer in front of a pre-spawned `aplay`, fed a 1 s lead
 * every 500 ms (paced-speaker.ts). A drop kills aplay, which takes the whole lead with it (hardware/audio.md).
 */
export function createAlsaSpeaker(options: AlsaSpeakerOptions): {
  speaker: PacedSpeaker
  device: AplayDevice
} {
  const sampleRateHz = options.sampleRateHz ?? LIVE_OUTPUT_RATE_HZ
  const device = new AplayDevice({ ...options, sampleRateHz })
  const speaker = new PacedSpeaker({
    device,
    sampleRateHz,
    clock: options.clock,
    leadMs: options.leadMs,
    tickMs: options.tickMs,
    stallMs: options.stallMs,
    logger: options.logger,
  })
  return { speaker, device }
}
