import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { quietNoise } from '../../src/audio/pcm.js'
import { parseWav } from '../../src/audio/wav.js'

/**
 * The room an idle-listening bench hears, 16 kHz mono S16LE: `talk` is the VAD fixtures' speech
 * (someone always talking: a television), anything else synthetic quiet noise.
 */
export function roomAudio(kind: string): Uint8Array {
  if (kind === 'talk') {
    const dir = join(import.meta.dirname, '..', '..', 'fixtures', 'vad')
    const files = ['speech-en-us-m', 'speech-en-gb-f', 'speech-en-us-f2', 'speech-en-sc-m']
    return Buffer.concat(
      files.map((f) => parseWav(readFileSync(join(dir, `${f}.wav`)), 16_000).pcm.subarray(32_000)),
    )
  }
  return quietNoise(32_000, 150)
}
