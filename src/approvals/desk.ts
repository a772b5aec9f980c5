import { randomUUID } from 'node:crypto'
import { BoundedMap } from '../core/bounded-map.js'
import { errorText, isNocturnError, NocturnError } from '../core/errors.js'
import { rememberedGrant } from '../core/grants.js'
import { tellEach } from '../core/listeners.js'
import type { Logger } from '../core/logger.js'
import type { ApprovalEnded, ApprovalListener, CoveredCall } from '../ports/approval-listener.js'
import type {
  Answer,
  AnswerVerdict,
  ApprovalCounter,
  ApprovalWire,
  Lookup,
  Sent,
} from '../ports/approval-wire.js'
import type { ApprovalDecision, ApprovalRequest, Approver } from '../ports/approver.js'
import type { Clock } from '../ports/clock.js'
import type { OwnerCheck } from '../ports/owner-check.js'
import type { OutcomeState } from '../protocol/phone-side.js'
import { maySelfApprove, type SelfApproval } from './self-approval.js'

export interface ApprovalDeskOptions {
  readonly wire: ApprovalWire
  /** Decides "expired" against a request's `expiresAt`, and stamps every ending. */
  readonly clock: Clock
  readonly logger: Logger
  /** Whether the phone that typed a message may approve its call (default `non-critical`). */
  readonly selfApproval?: SelfApproval
  /**
   * The owner's yes (docs/protocol.md, "The owner's yes"): asked for every critical approve, which
   * counts only with a valid, user-verified assertion. Absent: a critical yes is taken as it is.
   */
  readonly owner?: OwnerCheck
  /** How many ended ids are remembered, to say why a late answer is refused (bounded under a flood). */
  readonly remember?: number
}

interface Open {
  readonly request: ApprovalRequest
  readonly sent: Sent
  resolve(d: ApprovalDecision): void
  reject(e: Error): void
  cleanup(): void
}

/**
 * The approval desk: an approval's whole life, with no I/O — asked, pending, answered, expired or
 * withdrawn, and told to its listeners (history, device state, followers, Web Push). The gate asks
 * it as its Approver; a wire carries the request out and the answers in. The first answer that may
 * decide a pending approval wins; the gate's deadline (its abort) ends the rest. Every transition
 * happens here, on the injected clock, so one virtual clock tests them all.
 */
export class ApprovalDesk implements Approver, ApprovalCounter {
  readonly #wire: ApprovalWire
  readonly #clock: Clock
  readonly #log: Logger
  readonly #rule: SelfApproval
  readonly #owner: OwnerCheck | undefined
  readonly #listeners: ApprovalListener[] = []
  /** Asked and not yet out, each with when it will be: an id is asked once. */
  readonly #sending = new Map<string, Promise<void>>()
  readonly #open = new Map<string, Open>()
  readonly #ended: BoundedMap<string, OutcomeState>

  constructor(options: ApprovalDeskOptions) {
    this.#wire = options.wire
    this.#clock = options.clock
    this.#log = options.logger.child({ component: 'approval-desk' })
    this.#rule = options.selfApproval ?? 'non-critical'
    this.#owner = options.owner
    this.#ended = new BoundedMap(options.remember ?? 4096)
    options.wire.answerTo(this)
  }

  get audience(): string {
    return this.#wire.audience
  }

  /** Registers one who is told every approval's life from now on (wired once, in app/compose/). */
  listen(listener: ApprovalListener): void {
    this.#listeners.push(listener)
  }

  unavailable(): string | undefined {
    return this.#wire.unavailable()
  }

  /**
   * A remembered yes answered for the phones (the gate found a grant): nothing is asked or sent,
   * but the listeners are told, so the History keeps what a grant allowed as it keeps the rest.
   */
  covered(call: CoveredCall): void {
    const id = randomUUID()
    this.#tell((l) => l.covered?.(id, call))
  }

  async request(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    const id = request.id
    if (signal.aborted) throw new NocturnError('NOC_ERR_CANCELLED', 'withdrawn')
    if (this.#open.has(id) || this.#sending.has(id)) {
      throw new Error(`approval ${id} is already pending`)
    }
    let out!: () => void
    this.#sending.set(id, new Promise((resolve) => (out = resolve)))
    this.#tell((l) => l.asked?.(request))
    let sent: Sent
    try {
      sent = await this.#wire.send(request, signal)
    } catch (err) {
      this.#tellEnded({ request, state: 'failed', at: this.#clock.now() })
      throw err
    } finally {
      this.#sending.delete(id)
      // An answer that came while it was going out is taken once it is pending (below, this tick).
      out()
    }
    return new Promise<ApprovalDecision>((resolve, reject) => {
      // The deadline is the gate's (core/gate.ts): it aborts at `expiresAt` saying it timed out.
      const onAbort = () => {
        const open = this.#open.get(id)
        if (!open) return
        const expired = timedOut(signal.reason) || this.#clock.now() >= request.expiresAt
        this.#log.info({ approvalId: id, expired }, 'approval ended without a decision')
        this.#end(open, expired ? 'expired' : 'withdrawn')
        reject(
          expired
            ? new NocturnError('NOC_ERR_APPROVAL_TIMEOUT', 'nobody answered in time')
            : new NocturnError('NOC_ERR_CANCELLED', 'approval withdrawn'),
        )
      }
      this.#open.set(id, {
        request,
        sent,
        resolve,
        reject,
        cleanup: () => signal.removeEventListener('abort', onAbort),
      })
      this.#tell((l) => l.sent?.(request, sent))
      // Withdrawn while it was being sent: it went out, so it ends as any other would.
      if (signal.aborted) onAbort()
      else signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  lookup(id: string): Lookup {
    const open = this.#open.get(id)
    if (open) return { pending: true, request: open.request, sent: open.sent }
    return this.#gone(id, 'unknown-request')
  }

  pending(): Array<{ request: ApprovalRequest; sent: Sent }> {
    return [...this.#open.values()].map(({ request, sent }) => ({ request, sent }))
  }

  async answer(id: string, answer: Answer): Promise<AnswerVerdict> {
    const going = this.#sending.get(id)
    if (going) await going
    const open = this.#open.get(id)
    if (!open) return refused(this.#gone(id, 'unknown-request'))
    // Typing a request is never approving it: the asker's yes counts only where the rule allows,
    // and otherwise the request stays pending for another phone.
    if (answer.decision === 'approve' && !maySelfApprove(this.#rule, open.request, answer.phone)) {
      return {
        ok: false,
        reason: 'self-approval',
        fields: { critical: open.request.critical, rule: this.#rule },
      }
    }
    if (answer.decision === 'approve' && open.request.critical && this.#owner) {
      return this.#checkOwner(this.#owner, open, answer)
    }
    this.#accept(open, answer, {})
    return { ok: true }
  }

  fail(id: string, err: Error): void {
    const open = this.#open.get(id)
    if (!open) return
    this.#close(open, 'withdrawn')
    open.reject(err)
    this.#tellEnded({ request: open.request, state: 'failed', at: this.#clock.now() })
  }

  /** Ends every pending approval as withdrawn (the device is shutting down). */
  withdrawAll(): void {
    for (const open of [...this.#open.values()]) {
      this.#end(open, 'withdrawn')
      open.reject(new NocturnError('NOC_ERR_CANCELLED', 'the speaker is shutting down'))
    }
  }

  /**
   * A critical yes counts only with its owner's assertion. The check is asynchronous, so the
   * approval may have ended meanwhile (another phone answered, it expired, it was withdrawn):
   * then nothing is taken.
   */
  async #checkOwner(owner: OwnerCheck, open: Open, answer: Answer): Promise<AnswerVerdict> {
    const verdict = await owner
      .checkYes(answer.phone, answer.owner, open.sent.digest)
      .catch(
        (err: unknown) =>
          ({ ok: false, reason: 'invalid-assertion', detail: errorText(err) }) as const,
      )
    if (this.#open.get(open.request.id) !== open) {
      return refused(this.#gone(open.request.id, 'already-settled'))
    }
    if (!verdict.ok) {
      return {
        ok: false,
        reason: verdict.reason,
        fields: { critical: true, ...(verdict.detail !== undefined && { detail: verdict.detail }) },
        tell: verdict.reason,
      }
    }
    this.#accept(open, answer, { owner: verdict.owner })
    return { ok: true }
  }

  #accept(open: Open, answer: Answer, fields: Record<string, unknown>): void {
    const state = answer.decision === 'approve' ? 'approved' : 'denied'
    // The ending tells the phones what the gate will remember (a critical tool: once only).
    const grant =
      state === 'approved' ? rememberedGrant(open.request.critical, answer.grant) : undefined
    this.#log.info(
      {
        approvalId: open.request.id,
        phone: answer.phone,
        state,
        ...fields,
        ...(grant !== undefined && { grant }),
      },
      'decision accepted',
    )
    this.#end(open, state, answer.phone, grant)
    open.resolve({
      decision: answer.decision,
      ...(answer.grant !== undefined && { grant: answer.grant }),
      by: answer.phone,
    })
  }

  /** An ending: forgotten as pending, taken off the phones with its outcome, told to the listeners. */
  #end(open: Open, state: OutcomeState, by?: string, grant?: ApprovalEnded['grant']): void {
    this.#close(open, state)
    const at = this.#clock.now()
    const ending = {
      request: open.request,
      state,
      ...(by !== undefined && { by }),
      ...(grant !== undefined && { grant }),
      at,
    }
    const outcome = this.#wire.end({ ...ending, sent: open.sent })
    this.#tellEnded({ ...ending, ...(outcome && { outcome }) })
  }

  #close(open: Open, state: OutcomeState): void {
    open.cleanup()
    this.#open.delete(open.request.id)
    this.#ended.set(open.request.id, state)
  }

  /** Why an id that is not pending takes no answer. */
  #gone(id: string, unknown: 'unknown-request' | 'already-settled'): Lookup & { pending: false } {
    const state = this.#ended.get(id)
    if (state === 'withdrawn' || state === 'expired')
      return { pending: false, refusal: state, state }
    if (state) return { pending: false, refusal: 'already-settled', state }
    return { pending: false, refusal: unknown }
  }

  #tellEnded(ending: ApprovalEnded): void {
    this.#tell((l) => l.ended?.(ending))
  }

  /** Listeners are told after the fact; whatever one throws stays with it. */
  #tell(f: (l: ApprovalListener) => void): void {
    tellEach(this.#listeners, f, this.#log, { event: 'approval_listener_failed', level: 'error' })
  }
}

function refused(gone: Lookup & { pending: false }): AnswerVerdict {
  return {
    ok: false,
    reason: gone.refusal,
    ...(gone.refusal === 'already-settled' && gone.state && { fields: { state: gone.state } }),
  }
}

/** The gate aborts with NOC_ERR_APPROVAL_TIMEOUT at expiry; `AbortSignal.timeout` says TimeoutError. */
function timedOut(reason: unknown): boolean {
  if (isNocturnError(reason)) return reason.code === 'NOC_ERR_APPROVAL_TIMEOUT'
  return reason instanceof Error && reason.name === 'TimeoutError'
}
