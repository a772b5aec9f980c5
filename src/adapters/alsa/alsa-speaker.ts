import { PacedSpeaker } from '../../audio/paced-speaker.js'
import type { BackoffPolicy } from '../../core/backoff.js'
import type { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import { LIVE_OUTPUT_RATE_HZ } from '../../ports/live-llm.js'
import { AplayDevice } from './aplay-device.js'

export interface AlsaSpeakerOptions {
  readonly device: string
  readonly clock: Clock
  readonly logger: Logger
  readonly sampleRateHz?: number
  readonly leadMs?: number | undefined
  readonly tickMs?: number | undefined
  readonly stallMs?: number | undefined
  /** aplay's buffer and period (defaults in aplay-device.ts). */
  readonly bufferTimeUs?: number
  readonly periodTimeUs?: number
  readonly endPaddingUs?: number
  readonly backoff?: BackoffPolicy
  readonly onError?: (error: NocturnError) => void
  readonly command?: string | undefined
  readonly env?: NodeJS.ProcessEnv | undefined
}

/**
 * The speaker on ALSA: Nocturn's paced buffer in front of a pre-spawned `aplay`, fed a 1 s lead
 * every 250 ms (paced-speaker.ts). A drop kills aplay, which takes the whole lead with it (hardware/audio.md).
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
