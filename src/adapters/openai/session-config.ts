import type {
  ConversationItem,
  RealtimeSessionCreateRequest,
} from 'openai/resources/realtime/realtime'
import type { Message } from '../../core/conversation.js'
import type { LiveSetup } from '../../ports/live-llm.js'
import { OPENAI_VOICES } from './capabilities.js'

/** The Realtime API's one PCM rate, both ways. */
const REALTIME_RATE_HZ = 24_000

export interface SessionOptions {
  /** The voice when the persona names none the Realtime API has (a Gemini voice, say). */
  readonly voice: string
  /** The model that transcribes what the room says. */
  readonly transcriptionModel: string
}

/**
 * The `session.update` a connection opens with: the persona as instructions, PCM at 24 kHz both
 * ways, input transcription (transcripts, the wake's second opinion), server VAD that answers and
 * is interrupted by speech, and the tools. There is no per-tool `behavior` as on Gemini: on this
 * provider a call never pauses the session, the model decides what to say while it waits.
 */
export function sessionConfig(setup: LiveSetup, o: SessionOptions): RealtimeSessionCreateRequest {
  const voice = (OPENAI_VOICES as readonly string[]).includes(setup.persona.voice.toLowerCase())
    ? setup.persona.voice.toLowerCase()
    : o.voice
  const pcm = { type: 'audio/pcm', rate: REALTIME_RATE_HZ } as const
  return {
    type: 'realtime',
    instructions: setup.persona.instruction,
    output_modalities: ['audio'],
    audio: {
      input: {
        format: pcm,
        // ISO-639-1: "en-GB" is "en".
        transcription: {
          model: o.transcriptionModel,
          language: setup.persona.language.split('-')[0]?.toLowerCase() ?? 'en',
        },
        turn_detection: { type: 'server_vad', create_response: true, interrupt_response: true },
      },
      output: { format: pcm, voice },
    },
    tools: setup.tools.map((t) => ({
      type: 'function' as const,
      name: t.name,
      description: t.description,
      parameters: t.parameters,
    })),
    tool_choice: 'auto',
  }
}

/**
 * A fresh connection's history as conversation items: only the spoken words (user text in,
 * assistant text out), as a new Gemini connection gets them. Calls and their outcomes are left
 * out: a `function_call_output` needs its call in the same session.
 */
export function historyItems(history: readonly Message[]): ConversationItem[] {
  const out: ConversationItem[] = []
  for (const m of history) {
    if (m.role === 'user' && m.text) {
      out.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: m.text }] })
    } else if (m.role === 'assistant' && m.text) {
      out.push({
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: m.text }],
      })
    }
  }
  return out
}
