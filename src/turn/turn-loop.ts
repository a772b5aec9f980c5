import { randomUUID } from 'node:crypto'
import type { ToolCallRecord, ToolOutcome } from '../core/conversation.js'
import type { Logger } from '../core/logger.js'
import type { TalkDeps } from '../core/talk-deps.js'
import type { CallContext, Channel, PendingNotice } from '../core/types.js'
import type { LLM, LLMToolCall } from '../ports/llm.js'
import { wellFormedHistory } from './history.js'

/** Eight model steps is plenty for one typed request; more means the model is looping. */
const DEFAULT_MAX_STEPS = 8

export interface TurnLoopDeps extends TalkDeps<LLM> {
  readonly maxSteps?: number | undefined
}

export interface TurnInput {
  readonly conversationId: string
  readonly text: string
  readonly channel: Channel
  readonly signal?: AbortSignal | undefined
  /** The paired phone that typed this message; carried to any approval it needs. */
  readonly askedBy?: string
  /** Told when the gate starts waiting for a human, so the asker can be told too. */
  readonly onPending?: ((notice: PendingNotice) => void) | undefined
  /** Streamed model text, where the model streams. */
  readonly onText?: ((delta: string) => void) | undefined
  /** Each tool outcome as it lands. */
  readonly onToolResult?: (call: ToolCallRecord, outcome: ToolOutcome) => void
}

export interface TurnResult {
  readonly text: string
  readonly steps: number
  /** True when the step bound stopped the turn before the model answered. */
  readonly stepLimited: boolean
}

/**
 * The typed turn loop: ask the model, run the tool calls it asks for — concurrently, each behind
 * the gate — feed the outcomes back, until it answers. Every message is stored as it happens, so a
 * turn cut short by a crash leaves a readable, continuable conversation.
 */
export class TurnLoop {
  readonly #deps: TurnLoopDeps

  constructor(deps: TurnLoopDeps) {
    this.#deps = deps
  }

  async run(input: TurnInput): Promise<TurnResult> {
    const { llm, tools, store, persona, clock } = this.#deps
    const signal = input.signal ?? new AbortController().signal
    const maxSteps = this.#deps.maxSteps ?? DEFAULT_MAX_STEPS
    const log = this.#deps.logger.child({
      conversation: input.conversationId,
      channel: input.channel,
    })
    store.append(input.conversationId, {
      role: 'user',
      text: input.text,
      channel: input.channel,
      at: clock.now(),
      // Who typed it, so every phone's Chats can say who said what (issue 44).
      ...(input.askedBy !== undefined && { by: input.askedBy }),
    })
    for (let step = 1; step <= maxSteps; step++) {
      const history = wellFormedHistory(store.messages(input.conversationId))
      const answer = await llm.next(
        { persona, history, tools: tools.declarations(), onText: input.onText },
        signal,
      )
      const calls = uniqueIds(answer.toolCalls)
      store.append(input.conversationId, {
        role: 'assistant',
        text: answer.text,
        toolCalls: calls,
        channel: input.channel,
        at: clock.now(),
      })
      if (calls.length === 0) {
        log.info({ step }, 'turn answered')
        return { text: answer.text, steps: step, stepLimited: false }
      }
      log.info({ step, tools: calls.map((c) => c.name) }, 'turn running tools')
      await Promise.all(calls.map((call) => this.#runCall(call, input, signal, log)))
    }
    const text = `I stopped after ${maxSteps} steps without finishing; please ask again more simply.`
    log.warn({ event: 'turn_hit_step_bound', maxSteps }, 'turn hit the step bound')
    store.append(input.conversationId, {
      role: 'assistant',
      text,
      toolCalls: [],
      channel: input.channel,
      at: clock.now(),
    })
    return { text, steps: maxSteps, stepLimited: true }
  }

  async #runCall(
    call: ToolCallRecord,
    input: TurnInput,
    signal: AbortSignal,
    log: Logger,
  ): Promise<void> {
    const ctx: CallContext = {
      signal,
      channel: input.channel,
      conversationId: input.conversationId,
      callId: call.id,
      gate: this.#deps.gate,
      logger: log,
      ...(input.askedBy !== undefined && { askedBy: input.askedBy }),
      said: input.text,
      onPending: (n) => input.onPending?.(n),
    }
    const outcome = await this.#deps.tools.call(ctx, call.name, call.args)
    this.#deps.store.append(input.conversationId, {
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      args: call.args,
      outcome,
      channel: input.channel,
      at: this.#deps.clock.now(),
    })
    input.onToolResult?.(call, outcome)
  }
}

/** Models sometimes omit or repeat call ids; every call gets its own so outcomes match calls. */
function uniqueIds(calls: readonly LLMToolCall[]): ToolCallRecord[] {
  const seen = new Set<string>()
  return calls.map((c) => {
    let id = typeof c.id === 'string' && c.id !== '' ? c.id : randomUUID()
    if (seen.has(id)) id = `${id}-${randomUUID().slice(0, 8)}`
    seen.add(id)
    return { id, name: String(c.name), args: c.args ?? {} }
  })
}
