import { PacedSpeaker } from '../../audio/paced-speaker.js'
import type { Clock } from '../../ports/clock.js'
import { LIVE_OUTPUT_RATE_HZ } from '../../ports/live-llm.js'
import { WavFileDevice } from './wav-file-device.js'

/**
 * A file keeps whatever it was fed, so here the lead is what a drop leaves in the file past the
 * point that "played": it stays small (as does the tick, as before: tests read these files).
 */
const WAV_LEAD_MS = 20
const WAV_TICK_MS = 5

/** The speaker into a WAV file, through the same paced buffer as every other backend. */
export function createWavSpeaker(options: {
  path: string
  clock: Clock
  sampleRateHz?: number
  leadMs?: number | undefined
}): { speaker: PacedSpeaker; device: WavFileDevice } {
  const sampleRateHz = options.sampleRateHz ?? LIVE_OUTPUT_RATE_HZ
  const device = new WavFileDevice(options.path, sampleRateHz)
  return {
    speaker: new PacedSpeaker({
      device,
      sampleRateHz,
      clock: options.clock,
      leadMs: options.leadMs ?? WAV_LEAD_MS,
      tickMs: WAV_TICK_MS,
    }),
    device,
  }
}
