import { createInterface } from 'node:readline/promises'
import type { ApprovalDecision, ApprovalRequest, Approver } from '../../ports/approver.js'

export interface ConsoleApproverOptions {
  readonly input: NodeJS.ReadableStream
  readonly output: NodeJS.WritableStream
  /** Ask on the terminal; when false every request gets `autoAnswer` at once. */
  readonly interactive: boolean
  readonly autoAnswer: 'approve' | 'deny'
}

/**
 * An Approver for development: asks on the terminal, one request at a time. When stdin is not a
 * terminal (a pipe, CI) it answers by itself and says so, so nothing hangs.
 */
export class ConsoleApprover implements Approver {
  readonly audience = 'the console'
  readonly #options: ConsoleApproverOptions
  #queue: Promise<unknown> = Promise.resolve()

  constructor(options: ConsoleApproverOptions) {
    this.#options = options
  }

  request(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    const turn = this.#queue.then(() => this.#ask(req, signal))
    this.#queue = turn.catch(() => undefined)
    return turn
  }

  async #ask(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    signal.throwIfAborted()
    const { output } = this.#options
    const line = `approval needed (${req.channel}): ${req.action}`
    if (!this.#options.interactive) {
      const done = this.#options.autoAnswer === 'approve' ? 'approved' : 'denied'
      output.write(`${line} — ${done} automatically (stdin is not a terminal)\n`)
      return this.#options.autoAnswer === 'approve'
        ? { decision: 'approve', grant: 'once', by: 'console' }
        : { decision: 'deny', by: 'console' }
    }
    const rl = createInterface({ input: this.#options.input, output, terminal: true })
    try {
      const answer = await rl.question(`${line}\n  [y]es once, [s]ession, anything else: no > `, {
        signal,
      })
      const a = answer.trim().toLowerCase()
      if (a === 'y' || a === 'yes') return { decision: 'approve', grant: 'once', by: 'console' }
      if (a === 's' || a === 'session') {
        return { decision: 'approve', grant: 'session', by: 'console' }
      }
      return { decision: 'deny', by: 'console' }
    } catch (err) {
      if (signal.aborted) output.write('\n  (withdrawn)\n')
      throw err
    } finally {
      rl.close()
    }
  }
}
