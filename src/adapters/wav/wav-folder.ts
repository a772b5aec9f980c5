import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseWav, wavHeader } from '../../audio/wav.js'
import { NocturnError } from '../../core/errors.js'
import type { SentenceStore } from '../../ports/sentence-store.js'
import type { SpeechAudio } from '../../ports/speech.js'

/**
 * Sentences kept as WAV files in one folder (`<name>.wav`, 16-bit mono at the speech's own rate):
 * a person can play them to hear what the speaker will say. Written to a temporary name and
 * renamed, so a power cut leaves the old file or the new one, never half of one; a file that no
 * longer reads is as good as none (it is made again).
 */
export class WavFolder implements SentenceStore {
  readonly #dir: string

  constructor(dir: string) {
    this.#dir = dir
  }

  async read(name: string): Promise<SpeechAudio | undefined> {
    let bytes: Buffer
    try {
      bytes = await readFile(this.#path(name))
    } catch {
      return undefined
    }
    try {
      const wav = parseWav(bytes, undefined, name)
      return { pcm: wav.pcm, sampleRateHz: wav.sampleRateHz }
    } catch {
      return undefined
    }
  }

  async write(name: string, audio: SpeechAudio): Promise<void> {
    const path = this.#path(name)
    await mkdir(this.#dir, { recursive: true })
    const tmp = `${path}.tmp`
    await writeFile(
      tmp,
      Buffer.concat([wavHeader(audio.sampleRateHz, audio.pcm.byteLength), audio.pcm]),
    )
    await rename(tmp, path)
  }

  #path(name: string): string {
    if (!/^[A-Za-z0-9-]{1,100}$/.test(name)) {
      throw new NocturnError(
        'NOC_ERR_INTERNAL',
        `a kept sentence's name must be letters, digits and -: ${JSON.stringify(name)}`,
      )
    }
    return join(this.#dir, `${name}.wav`)
  }
}
