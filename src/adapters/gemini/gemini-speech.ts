import type { GenerateContentResponse } from '@google/genai'
import { errorText, NocturnError } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Speech, SpeechAudio, SpeechRequest } from '../../ports/speech.js'
import { createClient, type GenAI } from './client.js'
import { redactKey } from './redact.js'

export interface GeminiSpeechOptions {
  readonly apiKey: string
  /** A text-to-speech model (`generateContent` with audio out), e.g. gemini-3.8-flash-lite-tts. */
  readonly model: string
  readonly baseUrl?: string | undefined
  readonly logger: Logger
}

/** The rate Gemini's speech models answer at when the MIME type does not say. */
const DEFAULT_TTS_RATE_HZ = 24_000

/**
 * Speech over Gemini's text-to-speech route: `generateContent` on a TTS model with
 * `responseModalities: ["AUDIO"]` and the persona's voice; the answer is one `inlineData` part of
 * raw 16-bit PCM (`audio/L16;codec=pcm;rate=24000`). The SDK loads at the first announcement.
 */
export class GeminiSpeech implements Speech {
  readonly #options: GeminiSpeechOptions
  readonly #log: Logger
  #ai: Promise<GenAI> | undefined

  constructor(options: GeminiSpeechOptions) {
    this.#options = options
    this.#log = options.logger.child({ component: 'gemini-speech', model: options.model })
  }

  async synthesize(request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio> {
    let r: GenerateContentResponse
    try {
      this.#ai ??= createClient({ apiKey: this.#options.apiKey, baseUrl: this.#options.baseUrl })
      const ai = await this.#ai
      r = await ai.models.generateContent({
        model: this.#options.model,
        contents: [{ role: 'user', parts: [{ text: request.text }] }],
        config: {
          abortSignal: signal,
          responseModalities: ['AUDIO'],
          speechConfig: {
            voiceConfig: { prebuiltVoiceConfig: { voiceName: request.persona.voice } },
            languageCode: request.persona.language,
          },
        },
      })
    } catch (err) {
      if (signal.aborted) throw err
      const message = redactKey(errorText(err), this.#options.apiKey)
      throw new NocturnError('NOC_ERR_SPEECH_FAILED', `Gemini speech failed: ${message}`)
    }
    for (const part of r.candidates?.[0]?.content?.parts ?? []) {
      const data = part.inlineData?.data
      if (!data) continue
      const mime = part.inlineData?.mimeType ?? ''
      if (!/^audio\/(L16|pcm)\b/i.test(mime)) {
        throw new NocturnError('NOC_ERR_SPEECH_FAILED', `Gemini speech answered ${mime}, not PCM`)
      }
      const rate = Number(/rate=(\d+)/.exec(mime)?.[1] ?? DEFAULT_TTS_RATE_HZ)
      const pcm = Buffer.from(data, 'base64')
      this.#log.debug({ bytes: pcm.byteLength, rate }, 'speech synthesized')
      return { pcm: new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength), sampleRateHz: rate }
    }
    throw new NocturnError('NOC_ERR_SPEECH_FAILED', 'Gemini speech answered without audio')
  }
}
