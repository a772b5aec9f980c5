import type { ToolCallRecord, ToolOutcome } from '../core/conversation.js'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { CallContext, PendingNotice } from '../core/types.js'
import type { LiveToolCall } from '../ports/live-llm.js'
import type { CallLedger, VoiceCall } from './call-ledger.js'
import type { SessionHooks, VoiceSessionDeps } from './session-types.js'
import { finalAnswer, interimAnswer } from './tool-answers.js'
import type { TranscriptAssembler } from './transcript-assembler.js'
import type { TurnCounter } from './turn-counter.js'

export interface ToolCallRunnerDeps
  extends Pick<VoiceSessionDeps, 'llm' | 'tools' | 'gate' | 'clock' | 'options'> {
  readonly conversationId: string
  readonly log: Logger
  readonly hooks: SessionHooks
  /** Owns every call's state and lineage, and is the only way an answer leaves. */
  readonly ledger: CallLedger
  readonly turns: TurnCounter
  readonly transcript: TranscriptAssembler
  /** True once the session has started ending. */
  ending(): boolean
}

/** The connection that issued a batch of calls. */
export interface Issuer {
  readonly n: number
  readonly lineage: number
}

/**
 * The session's tool calls, each its own task (docs/voice-driver.md, rule 1): dispatched through
 * the ToolSet and its gate, an interim answer (or the local waiting cue) while a phone decides, and
 * a final answer scheduled by its lateness. What may be sent, and where, is the `CallLedger`'s.
 */
export class ToolCallRunner {
  readonly #deps: ToolCallRunnerDeps
  readonly #log: Logger
  #drained: (() => void) | undefined

  constructor(deps: ToolCallRunnerDeps) {
    this.#deps = deps
    this.#log = deps.log
  }

  /** At session start: are tools non-blocking on this model, and why (rules 2 and 11). */
  logCapabilities(): void {
    const caps = this.#deps.llm.capabilities
    if (caps.asyncToolCalls) {
      this.#log.info(
        {
          event: 'voice_tools_declared',
          model: caps.model,
          nonBlocking: true,
          why: 'the model supports asynchronous calls',
        },
        'voice tools declared',
      )
    } else {
      this.#log.info(
        {
          event: 'voice_tools_declared',
          model: caps.model,
          nonBlocking: false,
          why: 'the model has no asynchronous calls',
        },
        'voice tools declared',
      )
      this.#log.warn(
        { event: 'approvals_dead_air', model: caps.model },
        'approvals will be dead air on this model: it is silent while a phone decides',
      )
    }
    if (!caps.transcription) {
      this.#log.warn(
        { event: 'voice_transcript_calls_only', model: caps.model },
        'voice transcript will hold tool calls only',
      )
    }
  }

  /** A `toolCall` event: registers every well-formed call and starts a task for each. */
  onToolCall(conn: Issuer, calls: readonly LiveToolCall[]): void {
    const accepted: VoiceCall[] = []
    for (const c of Array.isArray(calls) ? calls : []) {
      const id = typeof c?.id === 'string' ? c.id : ''
      if (id === '') {
        this.#log.error(
          { event: 'call_without_id', tool: String(c?.name).slice(0, 80) },
          'voice tool call without an id',
        )
        continue
      }
      const call = this.#deps.ledger.issue(
        conn,
        { id, name: typeof c.name === 'string' ? c.name : String(c.name), args: c.args ?? {} },
        this.#deps.turns.current,
        this.#deps.clock.now(),
      )
      if (!call) {
        const known = this.#deps.ledger.get(id)
        this.#log.warn(
          { event: 'duplicate_call_id', callId: id, state: known?.state },
          'voice duplicate tool call id ignored',
        )
        continue
      }
      accepted.push(call)
    }
    if (accepted.length === 0) return
    this.#deps.transcript.toolCalls(accepted.map(recordOf))
    for (const call of accepted) {
      this.#log.info({ callId: call.id, tool: call.name, turn: call.turn }, 'voice tool call')
      // Its own task: the event handler returns before the tool (or its gate) starts.
      queueMicrotask(() => void this.#run(call))
    }
  }

  /** A `toolCallCancellation` event. */
  onCancellation(ids: readonly string[]): void {
    for (const id of Array.isArray(ids) ? ids : []) {
      if (!this.#deps.ledger.withdraw(String(id), 'provider')) {
        const known = this.#deps.ledger.get(String(id))
        this.#log.warn(
          {
            event: 'stray_cancellation',
            callId: String(id).slice(0, 120),
            state: known?.state ?? 'unknown',
          },
          'voice cancellation for a call not running ignored',
        )
      }
    }
  }

  /** Resolves when every tool task has finished, or after `endDrainMs`. */
  drain(): Promise<void> {
    if (this.#deps.ledger.unsettled().length === 0) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const timer = this.#deps.clock.setTimeout(() => done(), this.#deps.options.endDrainMs)
      const done = () => {
        this.#drained = undefined
        this.#deps.clock.clearTimeout(timer)
        resolve()
      }
      this.#drained = done
    })
  }

  /** After the drain: a tool still running is recorded as cancelled; its late result is ignored. */
  abandonUnsettled(): void {
    for (const call of this.#deps.ledger.unsettled()) {
      this.#log.warn(
        { event: 'voice_call_running_at_end', callId: call.id, tool: call.name },
        'voice call still running at session end',
      )
      this.#record(call, {
        ok: false,
        code: 'NOC_ERR_CANCELLED',
        error: 'the session ended before the call finished',
      })
    }
  }

  async #run(call: VoiceCall): Promise<void> {
    const said = this.#deps.transcript.lastWords()
    const ctx: CallContext = {
      signal: call.signal,
      channel: 'voice',
      conversationId: this.#deps.conversationId,
      callId: call.id,
      gate: this.#deps.gate,
      logger: this.#log.child({ callId: call.id }),
      ...(said !== undefined && { said }),
      onPending: (n) => this.#onPending(call, n),
    }
    let outcome: ToolOutcome
    try {
      outcome = await this.#deps.tools.call(ctx, call.name, call.args)
    } catch (err) {
      // ToolSet.call never throws; should that ever change, the call is still answered.
      outcome = { ok: false, code: 'NOC_ERR_TOOL_FAILED', error: `${call.name} failed` }
      this.#log.error(
        { event: 'voice_tool_call_threw', callId: call.id, err: errorText(err) },
        'voice tool call threw',
      )
    }
    call.settled = true
    this.#onOutcome(call, outcome)
    if (this.#deps.ledger.unsettled().length === 0) this.#drained?.()
  }

  #onPending(call: VoiceCall, notice: PendingNotice): void {
    if (this.#deps.ending() || !this.#deps.ledger.waiting(call, notice)) return
    const caps = this.#deps.llm.capabilities
    this.#log.info(
      { callId: call.id, approvalId: notice.approvalId, audience: notice.audience },
      'voice call waiting for approval',
    )
    if (caps.asyncToolCalls) {
      if (this.#deps.ledger.sendInterim(call, interimAnswer(call, notice))) {
        this.#log.info({ callId: call.id, scheduling: 'WHEN_IDLE' }, 'voice interim answer sent')
      }
    } else {
      // The model is silent until the answer: the device fills the dead air locally.
      this.#log.info({ callId: call.id }, 'voice waiting cue: the model waits silently')
      this.#deps.hooks.waiting({
        callId: call.id,
        approvalId: notice.approvalId,
        tool: notice.tool,
        action: notice.action,
        audience: notice.audience,
      })
    }
    this.#deps.hooks.changed()
  }

  #onOutcome(call: VoiceCall, outcome: ToolOutcome): void {
    this.#record(call, outcome)
    if (call.state === 'withdrawn') {
      this.#log.info(
        { callId: call.id, reason: call.withdrawReason, code: outcome.ok ? 'ok' : outcome.code },
        'voice withdrawn call settled: nothing sent',
      )
      this.#deps.hooks.changed()
      return
    }
    if (call.state !== 'running') return
    if (!this.#deps.llm.capabilities.asyncToolCalls) {
      this.#log.info(
        { event: 'final_answer', callId: call.id, tool: call.name, ok: outcome.ok },
        'voice final answer',
      )
      this.#deps.ledger.sendFinal(call, finalAnswer(call, outcome))
      this.#deps.hooks.changed()
      return
    }
    const scheduling = this.#deps.turns.schedulingFor(call.turn)
    const turnsSince = this.#deps.turns.since(call.turn)
    this.#log.info(
      {
        event: 'final_answer',
        callId: call.id,
        tool: call.name,
        ok: outcome.ok,
        scheduling,
        turnsSince,
        why: turnsSince === 0 ? 'no new turn since the call' : 'a new turn started since the call',
      },
      'voice final answer',
    )
    this.#deps.ledger.sendFinal(
      call,
      finalAnswer(call, outcome, { scheduling, afterInterim: call.interimSent }),
    )
    this.#deps.hooks.changed()
  }

  #record(call: VoiceCall, outcome: ToolOutcome): void {
    if (call.recorded) return
    call.recorded = true
    this.#deps.transcript.toolOutcome(recordOf(call), outcome)
  }
}

function recordOf(call: VoiceCall): ToolCallRecord {
  return { id: call.id, name: call.name, args: call.args }
}
