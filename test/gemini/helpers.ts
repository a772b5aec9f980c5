import { Writable } from 'node:stream'
import { realClock } from '../../src/adapters/clock/real-clock.js'
import { GeminiLive, type GeminiLiveOptions } from '../../src/adapters/gemini/gemini-live.js'
import { PROBE_TOOL } from '../../src/adapters/live-support/tool-call-probe.js'
import { createLogger } from '../../src/app/logger.js'
import { type Logger, silentLogger } from '../../src/core/logger.js'
import { defaultPersona } from '../../src/core/persona.js'
import type { ToolDeclaration } from '../../src/core/tool.js'
import type {
  LiveCloseInfo,
  LiveEvents,
  LiveSetup,
  LiveToolCall,
} from '../../src/ports/live-llm.js'
import {
  type ReceivedFrame,
  type Script,
  serverFrame,
} from '../../src/testing/fake-live-server/index.js'

export const KEY = 'AIzaSyFAKE-test-key-0123456789'

/** A native-audio model with asynchronous tool calls. */
export const ASYNC = 'gemini-2.5-flash-native-audio-preview-12-2025'

/**
 * The adapter over the real SDK: the test key, the async model, no logs and the real clock unless
 * `over` says otherwise; `baseUrl` is the fake Live server's (the real service when absent).
 */
export function geminiLive(over: Partial<GeminiLiveOptions> = {}): GeminiLive {
  return new GeminiLive({
    apiKey: KEY,
    model: ASYNC,
    logger: silentLogger,
    clock: realClock(),
    ...over,
  })
}

export type Ev =
  | { type: 'audio'; bytes: number; pcm: Buffer }
  | { type: 'inputTranscription' | 'outputTranscription'; text: string }
  | { type: 'interrupted' | 'generationComplete' | 'turnComplete' }
  | { type: 'toolCall'; calls: readonly LiveToolCall[] }
  | { type: 'toolCallCancellation'; ids: readonly string[] }
  | { type: 'goAway'; timeLeftMs: number | undefined }
  | { type: 'resumptionUpdate'; handle: string | undefined; resumable: boolean }
  | { type: 'usage'; total: number }
  | { type: 'closed'; info: LiveCloseInfo }

/** LiveEvents that write down everything, in order. */
export function recorder(): LiveEvents & { log: Ev[]; types(): string[] } {
  const log: Ev[] = []
  return {
    log,
    types: () => log.map((e) => e.type),
    audio: (pcm) => log.push({ type: 'audio', bytes: pcm.length, pcm: Buffer.from(pcm) }),
    inputTranscription: (text) => log.push({ type: 'inputTranscription', text }),
    outputTranscription: (text) => log.push({ type: 'outputTranscription', text }),
    interrupted: () => log.push({ type: 'interrupted' }),
    generationComplete: () => log.push({ type: 'generationComplete' }),
    turnComplete: () => log.push({ type: 'turnComplete' }),
    toolCall: (calls) => log.push({ type: 'toolCall', calls }),
    toolCallCancellation: (ids) => log.push({ type: 'toolCallCancellation', ids }),
    goAway: (timeLeftMs) => log.push({ type: 'goAway', timeLeftMs }),
    resumptionUpdate: (handle, resumable) =>
      log.push({ type: 'resumptionUpdate', handle, resumable }),
    usage: (total) => log.push({ type: 'usage', total }),
    closed: (info) => log.push({ type: 'closed', info }),
  }
}

/** The app's real pino logger, writing into memory, so tests can read every line. */
export function memoryLogger(): {
  logger: Logger
  lines: string[]
  parsed(): Record<string, unknown>[]
} {
  const lines: string[] = []
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean))
      cb()
    },
  })
  const logger = createLogger({ level: 'debug', destination })
  return { logger, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) }
}

export const unlockTool: ToolDeclaration = {
  name: 'unlock_door',
  description: 'Unlock a door of the house.',
  parameters: {
    type: 'object',
    properties: { door: { type: 'string', enum: ['front', 'back'], description: 'which door' } },
    required: ['door'],
    additionalProperties: false,
  },
}

const timeTool: ToolDeclaration = {
  name: 'current_time',
  description: 'The local time.',
  parameters: { type: 'object', properties: {} },
}

export function liveSetup(over: Partial<LiveSetup> = {}): LiveSetup {
  return {
    persona: defaultPersona,
    tools: [unlockTool, timeTool],
    nonBlockingTools: true,
    ...over,
  }
}

/**
 * The fake model's part in `doctor --probe`: asked by text, it calls the probe's tool; asked again,
 * it says a sentence — at once in the fake's default mode, and only once the call has its output
 * (never, in a probe) in its `blocking` mode. A session without the test tool just idles.
 */
export function probeScript(_conn: number, setup: Record<string, unknown>): Script {
  if (!JSON.stringify(setup.tools ?? []).includes(PROBE_TOOL)) return { steps: [] }
  const typed = (f: ReceivedFrame) =>
    typeof (f.frame.realtimeInput as { text?: unknown } | undefined)?.text === 'string'
  return {
    steps: [
      { waitFor: typed },
      { send: serverFrame.toolCall([{ id: 'probe-1', name: PROBE_TOOL }]) },
      { waitFor: typed },
      { send: serverFrame.outputTranscription('Still here, while it runs.') },
      { send: serverFrame.turnComplete() },
    ],
  }
}
