import type { OutcomeState } from '../protocol/phone-side.js'
import type { ApprovalRequest, GrantRequest } from './approver.js'
import type { OwnerRefusal } from './owner-check.js'

/**
 * ApprovalWire: how the approval desk (src/approvals/desk.ts) reaches the people who may answer —
 * the MQTT topics and signatures, or the terminal. It sends and ends requests and hands back each
 * answer it has verified; whether an approval is still pending, who may answer it and what an
 * answer means are the desk's. Like ws's receiver and sender, it keeps the bytes, not the life.
 */
export interface ApprovalWire {
  /** Who is asked, in words the model can say: "Anna's phone", "your phones". */
  readonly audience: string
  /** Why nobody can be asked right now (no broker, no paired phone); undefined when a request can go out. */
  unavailable(): string | undefined
  /** Called once by the desk: where the wire looks requests up and hands verified answers. */
  answerTo(desk: ApprovalCounter): void
  /**
   * Puts the request in front of everyone who may answer; resolves with what went out. Rejects
   * (a NocturnError saying why) when it cannot go out; may wait, bounded by `signal`, for a
   * connection that is being made.
   */
  send(request: ApprovalRequest, signal: AbortSignal): Promise<Sent>
  /** Takes an ended request off every phone and tells them how it ended; what went out, if anything. */
  end(ending: WireEnding): Sent | undefined
}

/** What a wire put out: the topic, the message exactly as sent, the phones it was signed for. */
export interface Sent {
  readonly topic: string
  readonly message: string
  readonly phones: readonly string[]
  /** What an answer is bound to (the request's digest over MQTT); the owner's yes is checked over it. */
  readonly digest: string
}

export interface WireEnding {
  readonly request: ApprovalRequest
  readonly sent: Sent
  readonly state: OutcomeState
  readonly by?: string
  /** What the device remembers with a yes (a critical tool: once). */
  readonly grant?: GrantRequest
  readonly at: number
}

/** One answer, its signature already verified by the wire. */
export interface Answer {
  readonly decision: 'approve' | 'deny'
  readonly grant?: GrantRequest
  /** The paired phone (or `console`) that answered. */
  readonly phone: string
  /** The decision's `owner` field as received (a WebAuthn assertion), for a critical yes. */
  readonly owner?: unknown
}

/** Why the desk took no answer: the request is not pending, or the answer may not decide it. */
export type DeskRefusal =
  | 'unknown-request'
  | 'already-settled'
  | 'withdrawn'
  | 'expired'
  | 'self-approval'
  | OwnerRefusal

export type AnswerVerdict =
  | { readonly ok: true }
  | {
      readonly ok: false
      readonly reason: DeskRefusal
      readonly fields?: Readonly<Record<string, unknown>>
      /** The phone should be told why (its yes failed the owner's check; it may try again). */
      readonly tell?: OwnerRefusal
    }

/** What a request id stands for at the desk now. */
export type Lookup =
  | { readonly pending: true; readonly request: ApprovalRequest; readonly sent: Sent }
  | { readonly pending: false; readonly refusal: DeskRefusal; readonly state?: OutcomeState }

/** The desk as a wire sees it. */
export interface ApprovalCounter {
  lookup(id: string): Lookup
  /** Every pending request with what went out for it (re-published after a reconnect). */
  pending(): ReadonlyArray<{ readonly request: ApprovalRequest; readonly sent: Sent }>
  /** An answer for `id`; the first that may decide it wins. */
  answer(id: string, answer: Answer): Promise<AnswerVerdict>
  /** The request can never reach anyone (the broker refuses its topic): the approval fails now. */
  fail(id: string, err: Error): void
}
