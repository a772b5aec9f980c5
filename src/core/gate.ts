import { randomUUID } from 'node:crypto'
import type { CoveredCall } from '../ports/approval-listener.js'
import type { ApprovalDecision, ApprovalRequest, Approver } from '../ports/approver.js'
import type { Clock } from '../ports/clock.js'
import type { GrantExpiry } from '../ports/grant-store.js'
import { raceAbort } from './abort.js'
import { digestOf } from './canonical.js'
import { errorText, isNocturnError, NocturnError } from './errors.js'
import { type Grants, rememberedGrant } from './grants.js'
import { type PolicyTable, policyFor } from './policy.js'
import { actionOf } from './tool.js'
import type { CallContext, PreparedCall, Tool } from './types.js'

export interface GateOptions {
  readonly policies: PolicyTable
  readonly approver: Approver
  readonly grants: Grants
  readonly clock: Clock
  /** How long a human has to answer before the request is withdrawn and the call denied. */
  readonly approvalTimeoutMs: number
  /** Told each call a remembered grant let run without asking, for the History (issue 44). */
  readonly onCovered?: (call: CoveredCall) => void
}

/**
 * The gate decides whether a call may run: by policy, then by a remembered grant, then by asking a
 * human. It fails closed — no approver, no answer in time, or anything but a clear yes is a no,
 * with a reason the model can say aloud.
 */
export class Gate {
  readonly #options: GateOptions

  constructor(options: GateOptions) {
    this.#options = options
  }

  get grants(): Grants {
    return this.#options.grants
  }

  /** Resolves when the call may run; throws a NocturnError saying why not. */
  async check(tool: Tool, args: unknown, ctx: CallContext, prepared?: PreparedCall): Promise<void> {
    const action = prepared?.action ?? actionOf(tool, args)
    const critical = prepared?.critical ?? tool.critical === true
    const policy = policyFor(tool, ctx.channel, this.#options.policies, critical)
    const log = ctx.logger.child({ tool: tool.name, callId: ctx.callId, channel: ctx.channel })
    if (policy === 'deny') {
      log.info({ policy }, 'gate denied by policy')
      const where = ctx.channel === 'voice' ? 'by voice' : 'from a typed message'
      throw new NocturnError('NOC_ERR_DENIED_BY_POLICY', `I'm not allowed to ${action} ${where}.`)
    }
    if (policy === 'allow') return
    const argsDigest = digestOf(args)
    const now = this.#options.clock.now()
    // A critical call asks every time: no grant is ever made for one, and a grant made when the
    // same arguments were harmless (a name that meant a lamp then) does not cover it now.
    const grant = critical
      ? undefined
      : this.#options.grants.find({
          tool: tool.name,
          args,
          argsDigest,
          channel: ctx.channel,
          conversationId: ctx.conversationId,
          now,
        })
    if (grant) {
      log.info({ grantId: grant.id, by: grant.createdBy.id }, 'gate allowed by grant')
      // Nobody is asked, but the History keeps what a remembered yes allowed (issue 44).
      const { channel, conversationId, askedBy, said } = ctx
      const call = { action, args, critical, channel, conversationId, targets: prepared?.targets }
      this.#options.onCovered?.({ tool: tool.name, ...call, askedBy, said, grant, at: now })
      return
    }
    const decision = await this.#ask(tool, args, argsDigest, action, critical, prepared, ctx, log)
    this.#remember(tool, args, argsDigest, decision, critical, ctx, log)
  }

  async #ask(
    tool: Tool,
    args: unknown,
    argsDigest: string,
    action: string,
    critical: boolean,
    prepared: PreparedCall | undefined,
    ctx: CallContext,
    log: CallContext['logger'],
  ): Promise<ApprovalDecision> {
    const { approver, clock, approvalTimeoutMs } = this.#options
    if (ctx.signal.aborted) throw cancelled()
    // Nobody can be asked (no broker, no phone): say so at once, with no "waiting" first.
    const unavailable = approver.unavailable?.()
    if (unavailable !== undefined) {
      log.warn(
        { event: 'gate_approver_unavailable', why: unavailable },
        'gate cannot ask: approver unavailable',
      )
      throw new NocturnError(
        'NOC_ERR_APPROVER_UNREACHABLE',
        `I can't reach ${approver.audience} right now, so I did not ${action}.`,
      )
    }
    const createdAt = clock.now()
    const request: ApprovalRequest = {
      id: randomUUID(),
      tool: tool.name,
      action,
      args,
      argsDigest,
      channel: ctx.channel,
      conversationId: ctx.conversationId,
      critical,
      ...(prepared?.targets !== undefined && { targets: prepared.targets }),
      ...(ctx.askedBy !== undefined && { askedBy: ctx.askedBy }),
      ...(ctx.said !== undefined && { said: ctx.said }),
      createdAt,
      expiresAt: createdAt + approvalTimeoutMs,
    }
    // One signal for the approver: aborted by the call's withdrawal or by our own deadline. The
    // deadline is this timer alone: approvers keep none of their own (ports/approver.ts).
    const withdraw = new AbortController()
    let timedOut = false
    const onCallAbort = () => withdraw.abort(new Error('call withdrawn'))
    ctx.signal.addEventListener('abort', onCallAbort, { once: true })
    const timer = clock.setTimeout(() => {
      timedOut = true
      withdraw.abort(new NocturnError('NOC_ERR_APPROVAL_TIMEOUT', 'nobody answered in time'))
    }, approvalTimeoutMs)
    log.info({ approvalId: request.id, audience: approver.audience }, 'gate waiting for approval')
    ctx.onPending({ approvalId: request.id, audience: approver.audience, tool: tool.name, action })
    let decision: unknown
    try {
      decision = await raceAbort(approver.request(request, withdraw.signal), withdraw.signal)
    } catch (err) {
      if (ctx.signal.aborted) {
        log.info({ approvalId: request.id }, 'gate wait withdrawn')
        throw cancelled()
      }
      // The approver withdrew every pending request itself: the speaker is shutting down.
      if (isNocturnError(err) && err.code === 'NOC_ERR_CANCELLED') {
        log.info({ approvalId: request.id, reason: err.message }, 'gate wait withdrawn')
        throw cancelled()
      }
      if (timedOut) {
        log.info({ approvalId: request.id }, 'gate approval timed out')
        throw new NocturnError(
          'NOC_ERR_APPROVAL_TIMEOUT',
          `Nobody answered on ${approver.audience} in time, so I did not ${action}.`,
        )
      }
      log.warn(
        { event: 'gate_approver_failed', approvalId: request.id, err: errorText(err) },
        'gate approver failed',
      )
      throw new NocturnError(
        'NOC_ERR_APPROVER_UNREACHABLE',
        `I can't reach ${approver.audience} right now, so I did not ${action}.`,
      )
    } finally {
      clock.clearTimeout(timer)
      ctx.signal.removeEventListener('abort', onCallAbort)
      // Whatever ended the wait, nobody should still be looking at this request.
      if (!withdraw.signal.aborted) withdraw.abort(new Error('settled'))
    }
    // A decision that lands after the call was withdrawn grants nothing.
    if (ctx.signal.aborted) throw cancelled()
    const d = decision as Partial<ApprovalDecision> | null | undefined
    if (d?.decision === 'deny') {
      log.info({ approvalId: request.id, by: d.by }, 'gate denied by human')
      throw new NocturnError(
        'NOC_ERR_DENIED_BY_HUMAN',
        `${approver.audience} said no to: ${action}.`,
      )
    }
    if (d?.decision !== 'approve' || typeof d.by !== 'string' || d.by === '') {
      log.warn(
        { event: 'gate_answer_unclear_denied', approvalId: request.id },
        'gate answer unclear, denied',
      )
      throw new NocturnError(
        'NOC_ERR_APPROVAL_UNCLEAR',
        `The answer from ${approver.audience} was not a clear yes, so I did not ${action}.`,
      )
    }
    log.info({ approvalId: request.id, by: d.by }, 'gate approved')
    return d as ApprovalDecision
  }

  #remember(
    tool: Tool,
    args: unknown,
    argsDigest: string,
    decision: ApprovalDecision,
    critical: boolean,
    ctx: CallContext,
    log: CallContext['logger'],
  ): void {
    const g = rememberedGrant(critical, decision.grant)
    if (g === 'once') {
      // A critical tool asks every time (docs/protocol.md): its yes counts for this call only.
      if (decision.grant !== undefined && decision.grant !== 'once') {
        log.info({ grant: decision.grant }, 'grant not remembered: this tool asks every time')
      }
      return
    }
    const expiry: GrantExpiry =
      g === 'session'
        ? { kind: 'session', conversationId: ctx.conversationId }
        : { kind: 'until', at: g.until }
    const pattern = tool.grantPattern?.(args)
    const created = this.#options.grants.add(
      {
        tool: tool.name,
        channel: ctx.channel,
        // The args are kept beside their digest so a phone listing grants sees what was approved.
        scope: pattern ? { kind: 'pattern', pattern } : { kind: 'exact', argsDigest, args },
        expiry,
        createdBy: { kind: decision.by === 'console' ? 'console' : 'phone', id: decision.by },
        createdAt: this.#options.clock.now(),
      },
      { critical },
    )
    log.info({ grantId: created.id, expiry: expiry.kind }, 'grant remembered')
  }
}

/** The gate as a decorator: the wrapped tool runs only after its gate check passes. */
export function gated<A>(tool: Tool<A>): Tool<A> {
  const call: Tool<A>['call'] = async (ctx, args) => {
    if (!ctx.gate) throw new NocturnError('NOC_ERR_NO_GATE', 'no gate is installed for this call')
    // Decided once: what the gate is asked about is what runs.
    const prepared = tool.prepare?.(args)
    await ctx.gate.check(tool as Tool, args, ctx, prepared)
    if (ctx.signal.aborted) throw cancelled()
    return prepared ? prepared.run(ctx) : tool.call(ctx, args)
  }
  // Copied with its getters rather than spread, so a description made on first use (timers.ts)
  // is still made on first use.
  return Object.defineProperties(
    {},
    {
      ...Object.getOwnPropertyDescriptors(tool),
      call: { value: call, enumerable: true },
    },
  ) as Tool<A>
}

function cancelled(): NocturnError {
  return new NocturnError('NOC_ERR_CANCELLED', 'the call was withdrawn')
}
