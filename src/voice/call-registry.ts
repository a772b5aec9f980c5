import type { PendingNotice } from '../core/context.js'

/**
 * running: the tool (or the gate under it) is at work; answered: its one final answer is sent or
 * queued; withdrawn: the provider withdrew it, the session ended, or its connection is gone —
 * nothing is ever sent for it.
 */
export type CallState = 'running' | 'answered' | 'withdrawn'

export type WithdrawReason = 'provider' | 'session_end' | 'connection_lost'

export interface LiveCall {
  readonly id: string
  readonly name: string
  readonly args: unknown
  /** The turn current when the call was made (DESIGN §2.4). */
  readonly turn: number
  /** The connection lineage that issued it: a resumed connection keeps it, a fresh one does not. */
  readonly lineage: number
  /** The connection (numbered in order of opening) that issued it. */
  readonly connection: number
  /** How many resumption handles had arrived when it was made: a handle older than the call
   *  resumes a session that never saw it. */
  readonly handleSeq: number
  readonly controller: AbortController
  readonly startedAt: number
  state: CallState
  withdrawReason?: WithdrawReason
  /** The approval the gate is waiting on, while it waits. */
  pending?: PendingNotice
  interimSent: boolean
  /** The tool task has finished (whatever it came to). */
  settled: boolean
  /** Its outcome is in the transcript. */
  recorded: boolean
}

/**
 * Every tool call of a session by id: one AbortController each, so withdrawing one call unwinds
 * its tool and the gate check under it, and a state that makes a second answer impossible.
 */
export class CallRegistry {
  readonly #calls = new Map<string, LiveCall>()

  /** Registers a call; undefined when the id is already known (in flight or answered). */
  add(input: {
    id: string
    name: string
    args: unknown
    turn: number
    lineage: number
    connection: number
    handleSeq: number
    at: number
  }): LiveCall | undefined {
    if (this.#calls.has(input.id)) return undefined
    const call: LiveCall = {
      id: input.id,
      name: input.name,
      args: input.args,
      turn: input.turn,
      lineage: input.lineage,
      connection: input.connection,
      handleSeq: input.handleSeq,
      controller: new AbortController(),
      startedAt: input.at,
      state: 'running',
      interimSent: false,
      settled: false,
      recorded: false,
    }
    this.#calls.set(call.id, call)
    return call
  }

  get(id: string): LiveCall | undefined {
    return this.#calls.get(id)
  }

  /**
   * Withdraws a running call: its signal aborts (the tool and the gate unwind, the approval is
   * taken off every phone) and it will never be answered. Returns the call if it was running.
   */
  withdraw(id: string, reason: WithdrawReason): LiveCall | undefined {
    const call = this.#calls.get(id)
    if (call?.state !== 'running') return undefined
    call.state = 'withdrawn'
    call.withdrawReason = reason
    call.pending = undefined
    call.controller.abort(new Error(`call withdrawn: ${reason}`))
    return call
  }

  /** Marks the one final answer; false when the call may not be answered (withdrawn, or done). */
  answer(call: LiveCall): boolean {
    if (call.state !== 'running') return false
    call.state = 'answered'
    call.pending = undefined
    return true
  }

  all(): LiveCall[] {
    return [...this.#calls.values()]
  }

  running(): LiveCall[] {
    return [...this.#calls.values()].filter((c) => c.state === 'running')
  }

  /** Calls whose tool task has not finished yet, whatever their state. */
  unsettled(): LiveCall[] {
    return [...this.#calls.values()].filter((c) => !c.settled)
  }

  /** Calls waiting for a human right now. */
  waitingForApproval(): number {
    let n = 0
    for (const c of this.#calls.values()) if (c.state === 'running' && c.pending) n++
    return n
  }

  counts(): Record<CallState, number> {
    const out: Record<CallState, number> = { running: 0, answered: 0, withdrawn: 0 }
    for (const c of this.#calls.values()) out[c.state]++
    return out
  }
}
