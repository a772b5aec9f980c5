import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { LiveEvents, LiveToolCall } from '../../ports/live-llm.js'
import { LIVE_OUTPUT_RATE_HZ } from '../../ports/live-llm.js'

/** Keys the adapter knows and deliberately does nothing with. */
const IGNORED_TOP = new Set(['setupComplete', 'voiceActivity', 'voiceActivityDetectionSignal'])
const IGNORED_CONTENT = new Set([
  'waitingForInput',
  'turnCompleteReason',
  'interactionStatus',
  'groundingMetadata',
  'urlContextMetadata',
  'interimInputTranscription',
])
const HANDLED_TOP = new Set([
  'serverContent',
  'toolCall',
  'toolCallCancellation',
  'usageMetadata',
  'sessionResumptionUpdate',
  'goAway',
])
const HANDLED_CONTENT = new Set([
  'modelTurn',
  'inputTranscription',
  'outputTranscription',
  'interrupted',
  'generationComplete',
  'turnComplete',
])

/**
 * Turns server frames into the port's events. One frame may carry several top-level keys and
 * several parts, so every key is looked at and nothing returns early (the live-api-web-console
 * bug: returning on `interrupted` loses the `turnComplete` beside it). Malformed pieces are logged
 * and skipped; a frame never throws out of here.
 */
export class ServerFrames {
  readonly #events: LiveEvents
  readonly #log: Logger
  /** Unknown keys are logged once each, not once per frame. */
  readonly #unknownSeen = new Set<string>()

  constructor(events: LiveEvents, logger: Logger) {
    this.#events = events
    this.#log = logger
  }

  dispatch(frame: Record<string, unknown>): void {
    for (const key of Object.keys(frame)) {
      if (!HANDLED_TOP.has(key) && !IGNORED_TOP.has(key)) this.#unknown(key)
    }
    // Order within a frame: what the model said, then what it asks, then bookkeeping.
    if (frame.serverContent !== undefined) this.#content(frame.serverContent)
    if (frame.toolCall !== undefined) this.#toolCall(frame.toolCall)
    if (frame.toolCallCancellation !== undefined) this.#cancellation(frame.toolCallCancellation)
    if (frame.usageMetadata !== undefined) this.#usage(frame.usageMetadata)
    if (frame.sessionResumptionUpdate !== undefined) this.#resumption(frame.sessionResumptionUpdate)
    if (frame.goAway !== undefined) this.#goAway(frame.goAway)
  }

  #content(c: unknown): void {
    if (!isRecord(c)) return void this.#bad('serverContent')
    for (const key of Object.keys(c)) {
      if (!HANDLED_CONTENT.has(key) && !IGNORED_CONTENT.has(key))
        this.#unknown(`serverContent.${key}`)
    }
    if (c.modelTurn !== undefined) this.#modelTurn(c.modelTurn)
    const input = transcriptionText(c.inputTranscription)
    if (input) this.#emit('inputTranscription', () => this.#events.inputTranscription(input))
    const output = transcriptionText(c.outputTranscription)
    if (output) this.#emit('outputTranscription', () => this.#events.outputTranscription(output))
    if (c.interrupted === true) this.#emit('interrupted', () => this.#events.interrupted())
    if (c.generationComplete === true) {
      this.#emit('generationComplete', () => this.#events.generationComplete())
    }
    if (c.turnComplete === true) this.#emit('turnComplete', () => this.#events.turnComplete())
  }

  #modelTurn(turn: unknown): void {
    if (!isRecord(turn) || !Array.isArray(turn.parts))
      return void this.#bad('serverContent.modelTurn')
    for (const part of turn.parts) {
      if (!isRecord(part)) continue
      // Thinking is not for the speaker.
      if (part.thought === true) continue
      if (part.inlineData !== undefined) this.#audio(part.inlineData)
      // Text, executableCode and the like: an audio session acts only on audio and `toolCall`.
    }
  }

  #audio(blob: unknown): void {
    if (!isRecord(blob) || typeof blob.data !== 'string') return void this.#bad('inlineData')
    const mime = typeof blob.mimeType === 'string' ? blob.mimeType : ''
    if (!isOutputPcm(mime)) {
      this.#log.warn(
        { event: 'audio_bad_format', mimeType: mime.slice(0, 64) },
        'live audio has an unexpected format; dropped',
      )
      return
    }
    // Buffer's decoder, not the SDK's `msg.data` getter, which decodes and re-encodes every part.
    const pcm = Buffer.from(blob.data, 'base64')
    if (pcm.length === 0) return
    this.#emit('audio', () => this.#events.audio(pcm))
  }

  #toolCall(t: unknown): void {
    if (!isRecord(t) || !Array.isArray(t.functionCalls)) return void this.#bad('toolCall')
    const calls: LiveToolCall[] = []
    for (const fc of t.functionCalls) {
      if (!isRecord(fc) || typeof fc.name !== 'string' || fc.name === '') {
        this.#log.warn({ event: 'call_without_name' }, 'live tool call without a name; ignored')
        continue
      }
      if (typeof fc.id !== 'string' || fc.id === '') {
        // Without an id it cannot be answered (the SDK refuses a response without one).
        this.#log.warn(
          { event: 'call_without_id', tool: fc.name },
          'live tool call without an id; ignored',
        )
        continue
      }
      calls.push({ id: fc.id, name: fc.name, args: fc.args ?? {} })
    }
    if (calls.length > 0) this.#emit('toolCall', () => this.#events.toolCall(calls))
  }

  #cancellation(c: unknown): void {
    if (!isRecord(c) || !Array.isArray(c.ids)) return void this.#bad('toolCallCancellation')
    const ids = c.ids.filter((id): id is string => typeof id === 'string' && id !== '')
    if (ids.length > 0)
      this.#emit('toolCallCancellation', () => this.#events.toolCallCancellation(ids))
  }

  #usage(u: unknown): void {
    if (!isRecord(u)) return void this.#bad('usageMetadata')
    // int64 fields may come as JSON strings.
    const total = Number(u.totalTokenCount)
    if (Number.isFinite(total)) this.#emit('usage', () => this.#events.usage(total))
  }

  #resumption(r: unknown): void {
    if (!isRecord(r)) return void this.#bad('sessionResumptionUpdate')
    const handle = typeof r.newHandle === 'string' && r.newHandle !== '' ? r.newHandle : undefined
    const resumable = r.resumable === true
    this.#emit('resumptionUpdate', () => this.#events.resumptionUpdate(handle, resumable))
  }

  #goAway(g: unknown): void {
    const left = isRecord(g) ? parseDurationMs(g.timeLeft) : undefined
    if (left === undefined)
      this.#log.warn({ event: 'go_away_unreadable' }, 'live goAway without a readable timeLeft')
    this.#emit('goAway', () => this.#events.goAway(left))
  }

  #emit(event: string, fn: () => void): void {
    try {
      fn()
    } catch (err) {
      // A listener's bug must not cost the rest of the frame.
      this.#log.error(
        {
          event: 'listener_threw',
          liveEvent: event,
          err: errorText(err),
        },
        'live event listener threw',
      )
    }
  }

  #unknown(key: string): void {
    if (this.#unknownSeen.has(key)) return
    this.#unknownSeen.add(key)
    this.#log.warn(
      { event: 'frame_unknown_key', field: key },
      'live frame has an unknown key; ignored',
    )
  }

  #bad(what: string): void {
    this.#log.warn({ event: 'frame_part_malformed', what }, 'live frame part is malformed; ignored')
  }
}

/** `audio/pcm;rate=24000` (or `audio/pcm` with no rate, which the service means as 24 kHz). */
function isOutputPcm(mime: string): boolean {
  const [type, ...params] = mime.split(';').map((s) => s.trim().toLowerCase())
  if (type !== 'audio/pcm' && type !== 'audio/l16') return false
  const rate = params.find((p) => p.startsWith('rate='))
  return rate === undefined || Number(rate.slice(5)) === LIVE_OUTPUT_RATE_HZ
}

function transcriptionText(t: unknown): string | undefined {
  return isRecord(t) && typeof t.text === 'string' && t.text !== '' ? t.text : undefined
}

/** Protobuf JSON durations: `"50s"`, `"1.500s"`; a bare number is taken as seconds. */
function parseDurationMs(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return Math.round(v * 1000)
  if (typeof v !== 'string') return undefined
  const m = /^(\d+(?:\.\d+)?)s$/.exec(v.trim())
  return m ? Math.round(Number(m[1]) * 1000) : undefined
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}
