import { DEFAULT_LEAD_MS, DEFAULT_TICK_MS, PacedSpeaker } from '../../audio/paced-speaker.js'
import type { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import { LIVE_OUTPUT_RATE_HZ } from '../../ports/live-llm.js'
import { PORTAUDIO_AHEAD_MS, PortAudioDevice } from './portaudio-device.js'

/**
 * What the paced speaker hands over waits in the device's own queue in JS, which a drop throws
 * away, and goes to naudiodon only as the device needs it (portaudio-device.ts). So the lead can
 * exceed the device's own feed, which it must for the device to have its whole feed to give: just
 * before a tick the device holds lead − tick, which must still cover the feed (and 20 ms more).
 */
export const PORTAUDIO_TICK_MS = DEFAULT_TICK_MS
export const PORTAUDIO_LEAD_MS = Math.max(
  DEFAULT_LEAD_MS,
  PORTAUDIO_AHEAD_MS + PORTAUDIO_TICK_MS + 20,
)

/** The speaker on PortAudio: the same paced buffer, in front of a naudiodon stream. */
export function createPortAudioSpeaker(options: {
  device: string
  clock: Clock
  logger: Logger
  sampleRateHz?: number
  leadMs?: number | undefined
  tickMs?: number | undefined
  stallMs?: number | undefined
  /** The device's own feed (portaudio-device.ts has the defaults and why). */
  framesPerBuffer?: number | undefined
  aheadMs?: number | undefined
  feedTickMs?: number | undefined
  onError?: (error: NocturnError) => void
}): { speaker: PacedSpeaker; device: PortAudioDevice } {
  const sampleRateHz = options.sampleRateHz ?? LIVE_OUTPUT_RATE_HZ
  const device = new PortAudioDevice({ ...options, sampleRateHz, tickMs: options.feedTickMs })
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
