import { PacedSpeaker } from '../../audio/paced-speaker.js'
import type { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import { LIVE_OUTPUT_RATE_HZ } from '../../ports/live-llm.js'
import { PortAudioDevice } from './portaudio-device.js'

/**
 * naudiodon cannot be killed: a drop still plays what its queue holds, so the lead stays small
 * (60 ms, the smallest the benchmark found gap-free under load with a 20 ms tick).
 */
export const PORTAUDIO_LEAD_MS = 60
export const PORTAUDIO_TICK_MS = 20

/** The speaker on PortAudio: the same paced buffer, in front of a naudiodon stream. */
export function createPortAudioSpeaker(options: {
  device: string
  clock: Clock
  logger: Logger
  sampleRateHz?: number
  leadMs?: number | undefined
  tickMs?: number | undefined
  stallMs?: number | undefined
  onError?: (error: NocturnError) => void
}): { speaker: PacedSpeaker; device: PortAudioDevice } {
  const sampleRateHz = options.sampleRateHz ?? LIVE_OUTPUT_RATE_HZ
  const device = new PortAudioDevice({ ...options, sampleRateHz })
  return {
    speaker: new PacedSpeaker({
      device,
      sampleRateHz,
      clock: options.clock,
      leadMs: options.leadMs ?? PORTAUDIO_LEAD_MS,
      tickMs: options.tickMs ?? PORTAUDIO_TICK_MS,
      stallMs: options.stallMs,
      logger: options.logger,
    }),
    device,
  }
}
