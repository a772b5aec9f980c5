import type { LiveCapabilities } from '../../ports/live-llm.js'
import { lookupRow, portView, UNKNOWN_MODEL_NOTE } from '../live-support/capability-table.js'

/**
 * The capability table: what each OpenAI Realtime model can do, keyed by model-id pattern, first
 * match wins (facts from OpenAI's model pages and the Realtime guide, docs/openai.md). An id no row
 * matches gets the safe answer (no asynchronous calls) and a warning; `doctor` shows which of these
 * the account really has.
 */
export interface OpenAIModelCapabilities {
  /**
   * The model keeps talking while a function call has no output yet, so an interim result (what is
   * pending) and a later final one make sense. Pre-GA previews stop and wait for the output.
   */
  readonly asyncToolCalls: boolean
  /** Input transcription (`audio.input.transcription`) for transcripts and the wake's second opinion. */
  readonly transcription: boolean
  /** The server closes a session after this long; there is no resumption handle. */
  readonly sessionLimitMs: number
  /** A realtime speech-to-speech model at all (the `gpt-audio*` family is chat-completions only). */
  readonly realtime: boolean
  /** One line for doctor and the startup log. */
  readonly note: string
}

interface Row extends OpenAIModelCapabilities {
  readonly pattern: RegExp
}

const HOUR = 60 * 60_000

const ga = {
  asyncToolCalls: true,
  transcription: true,
  sessionLimitMs: HOUR,
  realtime: true,
} as const

const TABLE: readonly Row[] = [
  {
    pattern: /^gpt-realtime-(translate|whisper)/,
    ...ga,
    asyncToolCalls: false,
    note: 'translation/transcription model, not for a voice agent',
  },
  {
    pattern: /^gpt-realtime-2/,
    ...ga,
    note: 'asynchronous function calls; 128k context; reasoning effort adjustable',
  },
  {
    pattern: /^gpt-realtime-1\.5|^gpt-realtime-mini|^gpt-realtime(-\d{4}-\d{2}-\d{2})?$/,
    ...ga,
    note: 'asynchronous function calls (GA, Aug 2025 and later)',
  },
  {
    pattern: /^gpt-4o(-mini)?-realtime-preview/,
    ...ga,
    asyncToolCalls: false,
    sessionLimitMs: HOUR / 2,
    note: 'beta preview: the model waits for each function output, so approvals are dead air',
  },
  {
    pattern: /^gpt-audio/,
    ...ga,
    asyncToolCalls: false,
    realtime: false,
    note: 'chat-completions audio model, not a realtime model',
  },
]

const UNKNOWN: OpenAIModelCapabilities = { ...ga, asyncToolCalls: false, note: UNKNOWN_MODEL_NOTE }

/** Looks a model id up. */
export function lookupOpenAICapabilities(model: string) {
  return lookupRow(TABLE, model, UNKNOWN)
}

/**
 * The port's view: no resumption on this provider (a new session is fed the history instead), and
 * the person's words transcribed asynchronously, often after the reply has begun (docs/openai.md).
 */
export function openaiLiveCapabilities(model: string): LiveCapabilities {
  return portView(model, lookupOpenAICapabilities(model).capabilities, {
    resumption: false,
    lateTranscription: true,
  })
}

/** The voices the Realtime API speaks with; a persona naming another provider's voice gets the default. */
export const OPENAI_VOICES = [
  'alloy',
  'ash',
  'ballad',
  'cedar',
  'coral',
  'echo',
  'marin',
  'sage',
  'shimmer',
  'verse',
] as const
