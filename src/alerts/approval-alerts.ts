import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Alerter, ApprovalAlert } from '../ports/alert.js'
import type {
  ApprovalBroadcast,
  BroadcastEnding,
  BroadcastRequest,
} from '../ports/approval-broadcast.js'

export interface ApprovalAlertsOptions {
  readonly alerters: readonly Alerter[]
  readonly deviceId: string
  /** The app's address at an approval's card. */
  readonly cardUrl: (id: string) => string
  readonly logger: Logger
}

/**
 * The alert channels a household already has (ntfy, Home Assistant), told of each request and
 * ending. An alert is built from the request's plain fields only — never from the signed message —
 * so no key, MAC or decision can reach it; the answer is given in the app, signed.
 */
export class ApprovalAlerts implements ApprovalBroadcast {
  readonly #o: ApprovalAlertsOptions
  readonly #log: Logger
  readonly #inFlight = new Set<Promise<void>>()

  constructor(options: ApprovalAlertsOptions) {
    this.#o = options
    this.#log = options.logger.child({ component: 'alerts' })
  }

  requested({ request: r }: BroadcastRequest): void {
    this.#send({
      kind: 'request',
      id: r.id,
      device: this.#o.deviceId,
      action: r.action,
      tool: r.tool,
      critical: r.critical,
      ...(r.askedBy !== undefined && { askedBy: r.askedBy }),
      expiresAt: r.expiresAt,
      url: this.#o.cardUrl(r.id),
    })
  }

  ended(e: BroadcastEnding): void {
    this.#send({
      kind: 'ended',
      id: e.id,
      device: this.#o.deviceId,
      state: e.state,
      url: this.#o.cardUrl(e.id),
    })
  }

  /** Resolves when every alert under way has been sent or has failed. */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight])
  }

  #send(alert: ApprovalAlert): void {
    for (const a of this.#o.alerters) {
      const task = Promise.resolve()
        .then(() => a.alert(alert))
        .catch((err: unknown) =>
          this.#log.warn(
            { event: 'alert_failed', channel: a.name, approvalId: alert.id, err: errorText(err) },
            'approval alert not sent',
          ),
        )
        .finally(() => this.#inFlight.delete(task))
      this.#inFlight.add(task)
    }
  }
}

/** Several broadcasts told in turn, each apart: one that throws does not keep the next from it. */
export function broadcastAll(all: readonly ApprovalBroadcast[]): ApprovalBroadcast {
  const each = (f: (b: ApprovalBroadcast) => void) => {
    for (const b of all) {
      try {
        f(b)
      } catch {
        // Each broadcast logs its own failures; the approval goes on.
      }
    }
  }
  return {
    requested: (r) => each((b) => b.requested(r)),
    ended: (e) => each((b) => b.ended(e)),
  }
}
