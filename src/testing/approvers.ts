import type { ApprovalDecision, ApprovalRequest, Approver } from '../ports/approver.js'

interface Asked {
  readonly request: ApprovalRequest
  readonly signal: AbortSignal
  answer(decision: unknown): void
  fail(error: Error): void
  /** True once the request was withdrawn (its signal aborted). */
  readonly withdrawn: boolean
}

/**
 * An Approver a test answers by hand: every request waits until the test calls `answer` or
 * `fail`, and records whether it was withdrawn.
 */
export class ManualApprover implements Approver {
  readonly audience: string
  readonly asked: Asked[] = []

  constructor(audience = "Anna's phone") {
    this.audience = audience
  }

  request(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalDecision> {
    return new Promise<ApprovalDecision>((resolve, reject) => {
      const entry: Asked = {
        request,
        signal,
        answer: (d) => resolve(d as ApprovalDecision),
        fail: (e) => reject(e),
        get withdrawn() {
          return signal.aborted
        },
      }
      this.asked.push(entry)
    })
  }

  last(): Asked {
    const a = this.asked.at(-1)
    if (!a) throw new Error('nothing was asked')
    return a
  }
}
