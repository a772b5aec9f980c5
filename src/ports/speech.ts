import type { Persona } from '../core/persona.js'

/**
 * Speech: a sentence to spoken audio in the provider's voice — one call, text in, audio out, so
 * nothing said can answer back and nothing the room says is heard (an announcement's path).
 */
export interface Speech {
  synthesize(request: SpeechRequest, signal: AbortSignal): Promise<SpeechAudio>
}

export interface SpeechRequest {
  readonly text: string
  /** Its voice and language; the instruction is not used (the text is read, not answered). */
  readonly persona: Persona
}

export interface SpeechAudio {
  /** 16-bit little-endian mono PCM. */
  readonly pcm: Uint8Array
  readonly sampleRateHz: number
}
