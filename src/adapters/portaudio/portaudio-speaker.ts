import { PacedSpeaker } from '../../audio/paced-speaker.js'
import type { NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import { PortAudioDevice } from './portaudio-device.js'

/** The speaker on PortAudio: the same paced buffer, in front of a naudiodon stream. */
export function createPortAudioSpeaker(o: {
  device: string
  clock: Clock
  logger: Logger
  sampleRateHz?: number
  leadMs?: number
  tickMs?: number
  onError?: (error: NocturnError) => void
}): { speaker: PacedSpeaker; device: PortAudioDevice } {
  const sampleRateHz = o.sampleRateHz ?? 24_000
  const device = new PortAudioDevice({ ...o, sampleRateHz })
  return {
    speaker: new PacedSpeaker({
      device,
      sampleRateHz,
      clock: o.clock,
      leadMs: o.leadMs,
      tickMs: o.tickMs,
    }),
    device,
  }
}
