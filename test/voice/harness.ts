import type { OpenAIRealtimeOptions } from '../../src/adapters/openai/openai-realtime.js'
import { MicGate } from '../../src/audio/mic-gate.js'
import { defaultPersona } from '../../src/core/persona.js'
import type { PolicyTable } from '../../src/core/policy.js'
import { ToolSet } from '../../src/core/tool-set.js'
import type { Tool } from '../../src/core/types.js'
import type { LiveCapabilities, LiveLLM, LiveSetup } from '../../src/ports/live-llm.js'
import type { LedState } from '../../src/ports/panel.js'
import { type FakeLiveConnection, FakeLiveLLM } from '../../src/testing/fake-live-llm.js'
import type { FakeLiveServer } from '../../src/testing/fake-live-server/index.js'
import { FakeMic } from '../../src/testing/fake-mic.js'
import type { FakeRealtimeServer } from '../../src/testing/fake-realtime-server/index.js'
import { FakeSpeaker } from '../../src/testing/fake-speaker.js'
import { MemoryLogger } from '../../src/testing/memory-logger.js'
import { settle } from '../../src/testing/virtual-clock.js'
import type { VoiceOptions, WaitingNotice } from '../../src/voice/session-types.js'
import { type RunSessionOptions, VoiceDriver } from '../../src/voice/voice-driver.js'
import { geminiLive } from '../gemini/helpers.js'
import { coreFixture } from '../helpers/core.js'
import { openaiRealtime } from '../openai/helpers.js'

/**
 * A microphone the test speaks into: each `speak()` is one 20 ms frame of non-silent audio, every
 * byte the frame's mark (7, 8, … 246, then 7 again; `FakeLiveLLM.audioMarks` shows what arrived).
 * Like the real sources it lends one reused buffer for every frame (ports/audio.ts), so whatever
 * keeps audio without copying it shows up here as the wrong marks.
 */
export class TestMic extends FakeMic {
  readonly #frame = new Uint8Array(640)
  #spoken = 0
  speak(frames = 1): void {
    for (let i = 0; i < frames; i++) {
      this.#frame.fill(7 + (this.#spoken++ % 240))
      this.sink?.frame(this.#frame, 0)
    }
  }
}

/** The doors a test unlocks; `unlocked` records every run. */
export function doorTool(unlocked: string[]): Tool {
  return {
    name: 'unlock_door',
    description: 'Unlocks a door.',
    parameters: {
      type: 'object',
      properties: { door: { type: 'string', enum: ['front', 'back'] } },
      required: ['door'],
    },
    critical: true,
    describe: (a) => `unlock the ${(a as { door: string }).door} door`,
    call: async (_ctx, a) => {
      unlocked.push((a as { door: string }).door)
      return { unlocked: (a as { door: string }).door }
    },
  }
}

function lightTool(set: string[]): Tool {
  return {
    name: 'set_light',
    description: 'Switches a light.',
    parameters: { type: 'object', properties: { room: { type: 'string' } }, required: ['room'] },
    describe: (a) => `switch on the ${(a as { room: string }).room} light`,
    call: async (_ctx, a) => {
      set.push((a as { room: string }).room)
      return { on: (a as { room: string }).room }
    },
  }
}

export const timeTool: Tool = {
  name: 'current_time',
  description: 'The time.',
  parameters: { type: 'object', properties: {} },
  policy: { voice: 'allow' },
  call: async () => ({ time: '12:00' }),
}

/** A tool that runs until the test releases it; it sees its signal but does not obey it. */
export function latchTool(name: string, policy: Tool['policy']) {
  const state = { started: 0, signal: undefined as AbortSignal | undefined }
  let release!: (v: unknown) => void
  const done = new Promise<unknown>((r) => {
    release = r
  })
  const tool: Tool = {
    name,
    description: name,
    parameters: { type: 'object', properties: {} },
    policy,
    call: async (ctx) => {
      state.started++
      state.signal = ctx.signal
      return done
    },
  }
  return { tool, state, release }
}

export interface VoiceFixtureOptions {
  readonly capabilities?: Partial<LiveCapabilities>
  readonly tools?: Tool[]
  readonly policies?: PolicyTable
  readonly options?: Partial<VoiceOptions>
  readonly openLatencyMs?: number
  readonly closeLatencyMs?: number
  readonly onOpen?: (conn: FakeLiveConnection) => void
  readonly failOpen?: (setup: LiveSetup, attempt: number) => Error | undefined
  readonly echo?: 'gate' | 'aec'
  readonly approvalTimeoutMs?: number
}

/**
 * The voice driver over the scripted fake model, the fake speaker, a real gate on an in-memory
 * store and a hand-answered approver — all on one virtual clock.
 */
export function voiceFixture(o: VoiceFixtureOptions = {}) {
  const core = coreFixture({ policies: o.policies, timeoutMs: o.approvalTimeoutMs ?? 120_000 })
  const { clock, store, approver, gate, grants } = core
  const unlocked: string[] = []
  const lights: string[] = []
  const tools = new ToolSet(o.tools ?? [doorTool(unlocked), lightTool(lights), timeTool])
  const speaker = new FakeSpeaker(clock)
  const source = new TestMic()
  const mic = new MicGate({ source, speaker, clock, echo: o.echo ?? 'aec', tailMs: 300 })
  const llm = new FakeLiveLLM({
    capabilities: o.capabilities,
    clock,
    openLatencyMs: o.openLatencyMs,
    closeLatencyMs: o.closeLatencyMs,
    onOpen: o.onOpen,
    failOpen: o.failOpen,
  })
  const log = new MemoryLogger()
  const states: LedState[] = []
  const waiting: WaitingNotice[] = []
  const driver = new VoiceDriver({
    llm,
    tools,
    gate,
    store,
    persona: defaultPersona,
    clock,
    logger: log,
    mic,
    speaker,
    listener: { state: (s) => states.push(s), waiting: (w) => waiting.push(w) },
    options: { idleMs: 10 * 60_000, budgetMs: 30 * 60_000, ...o.options },
  })
  const onlyConversation = (): string => {
    const c = store.listConversations()[0]
    if (!c) throw new Error('no conversation was stored')
    return c.id
  }
  return {
    clock,
    store,
    gate,
    approver,
    grants,
    unlocked,
    lights,
    speaker,
    source,
    llm,
    log,
    states,
    waiting,
    driver,
    /** Starts a session and waits until its first connection is open. */
    async start(opts: RunSessionOptions = {}) {
      const done = driver.runSession(opts)
      await settle()
      return { done, conn: llm.current }
    },
    /** The conversation the (only) session stored. */
    conversationId: onlyConversation,
    /** The stored chat of a conversation, in a compact readable form. */
    chat(conversationId = onlyConversation()): string[] {
      return store.messages(conversationId).map((m) => {
        if (m.role === 'user') return `user: ${m.text}`
        if (m.role === 'assistant') {
          const calls = m.toolCalls.map((c) => `${c.name}#${c.id}`).join(',')
          return calls
            ? `assistant: [${calls}]${m.text ? ` ${m.text}` : ''}`
            : `assistant: ${m.text}`
        }
        return `tool ${m.toolName}#${m.toolCallId}: ${m.outcome.ok ? 'ok' : m.outcome.code}`
      })
    },
  }
}

/**
 * The voice driver over the real SDK (GeminiLive against the fake Live `server`), the fake speaker
 * and a real gate: resolves once the first session's connection is open and settled.
 */
export async function geminiVoiceFixture(server: FakeLiveServer) {
  const log = new MemoryLogger()
  const world = await realSdkWorld(
    log,
    geminiLive({ apiKey: 'k', baseUrl: server.baseUrl, logger: log }),
  )
  const conn = await server.waitForConnection(0)
  await new Promise((r) => setTimeout(r, 30))
  await settle()
  return { ...world, conn }
}

/**
 * The same world over OpenAI Realtime (the real `openai` package against the fake Realtime
 * service): resolves once the first session's connection is set up and settled.
 */
export async function openaiVoiceFixture(
  server: FakeRealtimeServer,
  over: Partial<OpenAIRealtimeOptions> = {},
  session: RunSessionOptions = {},
) {
  const log = new MemoryLogger()
  const core = coreFixture({ timeoutMs: 120_000 })
  const llm = openaiRealtime({ baseUrl: server.baseUrl, logger: log, clock: core.clock, ...over })
  const world = await realSdkWorld(log, llm, core, session)
  const conn = await server.waitForConnection(0)
  await new Promise((r) => setTimeout(r, 30))
  await settle()
  return { ...world, conn }
}

/** The voice driver over a real provider adapter, the fake speaker and a real gate, its session started. */
export async function realSdkWorld(
  log: MemoryLogger,
  llm: LiveLLM,
  core = coreFixture({ timeoutMs: 120_000 }),
  session: RunSessionOptions = {},
) {
  const unlocked: string[] = []
  const speaker = new FakeSpeaker(core.clock)
  const source = new TestMic()
  const mic = new MicGate({ source, speaker, clock: core.clock, echo: 'aec', tailMs: 300 })
  const driver = new VoiceDriver({
    llm,
    tools: new ToolSet([doorTool(unlocked), timeTool]),
    gate: core.gate,
    store: core.store,
    persona: defaultPersona,
    clock: core.clock,
    logger: log,
    mic,
    speaker,
    options: { idleMs: 10 * 60_000, budgetMs: 30 * 60_000 },
  })
  const done = driver.runSession(session)
  return { ...core, unlocked, speaker, source, driver, done, log }
}

export { settle }
