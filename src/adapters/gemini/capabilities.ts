import type { LiveCapabilities } from '../../ports/live-llm.js'
import { lookupRow, portView, UNKNOWN_MODEL_NOTE } from '../live-support/capability-table.js'

/**
 * The capability table: what each Gemini Live model can do, keyed by model-id pattern (facts from
 * gemini-live.md §2.3, docs up to Sept 2026). The first matching row wins, so narrower patterns come
 * first. `doctor` confirms which of these the account really has; an id no row matches gets the safe
 * answer (no asynchronous calls) and a warning.
 */
export interface ModelCapabilities {
  /** `behavior: NON_BLOCKING` works: interim results (`willContinue`) and non-blocking calls. */
  readonly asyncToolCalls: boolean
  /** `behavior: BLOCKING` is accepted (3.8 extended thinking rejects it with a hard error). */
  readonly blockingAllowed: boolean
  /** Declarations without `behavior` are non-blocking (3.8): to block, say `BLOCKING` explicitly. */
  readonly nonBlockingByDefault: boolean
  /** `FunctionResponse.scheduling` is honoured (3.8 extended thinking: not supported). */
  readonly scheduling: boolean
  readonly transcription: boolean
  readonly resumption: boolean
  /** One line for doctor and the startup log. */
  readonly note: string
}

interface Row extends ModelCapabilities {
  readonly pattern: RegExp
}

const sync = {
  asyncToolCalls: false,
  blockingAllowed: true,
  nonBlockingByDefault: false,
  scheduling: false,
  transcription: true,
  resumption: true,
} as const

const async = { ...sync, asyncToolCalls: true, scheduling: true } as const

const TABLE: readonly Row[] = [
  {
    pattern: /^gemini-3\.8-live-extended-thinking/,
    ...async,
    blockingAllowed: false,
    nonBlockingByDefault: true,
    scheduling: false,
    note: 'non-blocking calls only; scheduling is not supported; idle is interactionStatus, not turnComplete',
  },
  {
    pattern: /^gemini-3\.8-live/,
    ...async,
    nonBlockingByDefault: true,
    note: 'non-blocking is the default; blocking tools must say BLOCKING',
  },
  {
    pattern: /^gemini-3\.1-flash-live/,
    ...sync,
    note: 'synchronous calls only: the model is silent while an approval waits',
  },
  {
    pattern:
      /^gemini-2\.5-flash-native-audio-preview-(09|12)-2025|^gemini-2\.5-flash-native-audio-latest/,
    ...async,
    note: 'asynchronous calls supported (deprecated Aug 2026: migrate to 3.x)',
  },
  {
    // The May-2025 native-audio dialog previews: async calls were half-cascade only at the time.
    pattern: /^gemini-2\.5-flash-(preview-native-audio-dialog|exp-native-audio-thinking-dialog)/,
    ...sync,
    note: 'synchronous calls only (May-2025 native-audio preview)',
  },
  {
    pattern: /^gemini-live-2\.5-flash-preview|^gemini-2\.0-flash-live-001/,
    ...async,
    note: 'half-cascade model, shut down on 9 Dec 2025',
  },
  {
    // Specialised live variants: not a conversational agent model.
    pattern: /-live-translate|-transcribe-live/,
    ...sync,
    note: 'translation/transcription variant, not for a voice agent',
  },
]

export interface CapabilityLookup {
  readonly capabilities: ModelCapabilities
  /** False when no row matched and the safe default was used. */
  readonly known: boolean
}

const UNKNOWN: ModelCapabilities = { ...sync, note: UNKNOWN_MODEL_NOTE }

/** Looks a model id up; `models/` prefixes are ignored. */
export function lookupCapabilities(model: string): CapabilityLookup {
  return lookupRow(TABLE, model.replace(/^models\//, ''), UNKNOWN)
}

/**
 * The port's view of a model's capabilities. Gemini sends the person's words before its reply or
 * in the same stream, never marked late: nothing need wait for them.
 */
export function liveCapabilities(model: string): LiveCapabilities {
  const { capabilities: c } = lookupCapabilities(model)
  return portView(model, c, { resumption: c.resumption, lateTranscription: false })
}
