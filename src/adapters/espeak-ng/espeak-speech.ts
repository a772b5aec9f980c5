import { execFile } from 'node:child_process'
import { parseWav } from '../../audio/wav.js'
import { NocturnError } from '../../core/errors.js'
import type { Speech, SpeechAudio, SpeechRequest } from '../../ports/speech.js'

export interface EspeakSpeechOptions {
  /** The program; `espeak-ng` on PATH by default (Debian package `espeak-ng`). */
  readonly command?: string
  readonly env?: NodeJS.ProcessEnv
}

/** A sentence is a second or two of speech: anything slower is a stuck program. */
const TIMEOUT_MS = 10_000

/**
 * Speech on the device itself, by the `espeak-ng` command line (no shell; the text in argv, it is
 * never secret): its WAV on stdout, 22.05 kHz mono, read as it is — the caller resamples. The
 * persona's language picks the voice (`en-GB` → `en-gb`); an unknown one falls back to English.
 * A robotic voice, but one that needs no network and no key: what says why before a provider
 * could make the sentences.
 */
export class EspeakSpeech implements Speech {
  readonly #command: string
  readonly #env: NodeJS.ProcessEnv | undefined

  constructor(options: EspeakSpeechOptions = {}) {
    this.#command = options.command ?? 'espeak-ng'
    this.#env = options.env
  }

  synthesize(request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio> {
    return this.#run(request.persona.language.toLowerCase(), request.text, signal)
  }

  #run(voice: string, text: string, signal: AbortSignal): Promise<SpeechAudio> {
    return new Promise((resolve, reject) => {
      execFile(
        this.#command,
        ['-v', voice, '--stdout', text],
        {
          encoding: 'buffer',
          maxBuffer: 16 * 1024 * 1024,
          timeout: TIMEOUT_MS,
          signal,
          ...(this.#env && { env: this.#env }),
        },
        (error, stdout, stderr) => {
          if (error) {
            const said = stderr.toString('utf8')
            if (voice !== 'en' && /voice does not exist/i.test(said)) {
              this.#run('en', text, signal).then(resolve, reject)
            } else reject(espeakError(this.#command, error, said))
            return
          }
          try {
            const wav = parseWav(streamedSizes(stdout), undefined, 'espeak-ng output')
            resolve({ pcm: wav.pcm, sampleRateHz: wav.sampleRateHz })
          } catch (err) {
            reject(err)
          }
        },
      )
    })
  }
}

function espeakError(command: string, error: Error, stderr: string): Error {
  const code = (error as NodeJS.ErrnoException).code
  const why =
    code === 'ENOENT'
      ? `${command} is not installed (Debian package espeak-ng)`
      : `${command} failed: ${stderr.trim().split('\n')[0] || error.message}`
  return new NocturnError('NOC_ERR_SPEECH_FAILED', why, { cause: error })
}

/**
 * espeak-ng writing to a pipe cannot seek back, so its header's sizes are placeholders
 * (0x7ffff000): set them to what arrived, for a 44-byte header with its `data` chunk at 36.
 */
function streamedSizes(bytes: Buffer): Uint8Array {
  const out = new Uint8Array(bytes)
  const v = new DataView(out.buffer)
  if (out.byteLength >= 44 && String.fromCharCode(...out.subarray(36, 40)) === 'data') {
    v.setUint32(4, out.byteLength - 8, true)
    v.setUint32(40, out.byteLength - 44, true)
  }
  return out
}
