import { PacedSpeaker } from '../../audio/paced-speaker.js'
import type { Clock } from '../../ports/clock.js'
import { WavFileDevice } from './wav-file-device.js'

/** The speaker into a WAV file, through the same paced buffer as every other backend. */
export function createWavSpeaker(o: {
  path: string
  clock: Clock
  sampleRateHz?: number
  leadMs?: number
}): { speaker: PacedSpeaker; device: WavFileDevice } {
  const sampleRateHz = o.sampleRateHz ?? 24_000
  const device = new WavFileDevice(o.path, sampleRateHz)
  return {
    speaker: new PacedSpeaker({ device, sampleRateHz, clock: o.clock, leadMs: o.leadMs }),
    device,
  }
}
