import { errorText, NocturnError } from '../../core/errors.js'
import type { Speech, SpeechAudio, SpeechRequest } from '../../ports/speech.js'
import { OPENAI_VOICES } from './capabilities.js'
import { createRestClient, type RestClient, redactKey } from './client.js'

export interface OpenAISpeechOptions {
  readonly apiKey: string
  /** A text-to-speech model, e.g. gpt-4o-mini-tts. */
  readonly model: string
  /** The voice when the persona names none of OpenAI's. */
  readonly voice: string
  readonly baseUrl?: string | undefined
}

/** `response_format: "pcm"` is raw 24 kHz 16-bit little-endian mono. */
const PCM_RATE_HZ = 24_000

/** Speech over `POST /v1/audio/speech`, raw PCM out; the SDK loads at the first announcement. */
export class OpenAISpeech implements Speech {
  #client: Promise<RestClient> | undefined
  readonly #o: OpenAISpeechOptions

  constructor(o: OpenAISpeechOptions) {
    this.#o = o
  }

  async synthesize(request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio> {
    const v = request.persona.voice.toLowerCase()
    const voice = (OPENAI_VOICES as readonly string[]).includes(v) ? v : this.#o.voice
    try {
      this.#client ??= createRestClient(this.#o)
      const client = await this.#client
      const res = await client.audio.speech.create(
        { model: this.#o.model, voice, input: request.text, response_format: 'pcm' },
        { signal },
      )
      const pcm = new Uint8Array(await res.arrayBuffer())
      if (pcm.byteLength === 0) throw new Error('no audio in the answer')
      return { pcm, sampleRateHz: PCM_RATE_HZ }
    } catch (err) {
      if (signal.aborted) throw err
      const message = redactKey(errorText(err), this.#o.apiKey)
      throw new NocturnError('NOC_ERR_SPEECH_FAILED', `OpenAI speech failed: ${message}`)
    }
  }
}
