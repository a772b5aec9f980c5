import type { ApprovalCounter, ApprovalWire, Sent } from '../ports/approval-wire.js'
import type { Approver } from '../ports/approver.js'

/**
 * A wire for an approver that asks and answers by itself (the terminal during development): each
 * request is asked of it, and what it answers is handed to the desk as one answer. Withdrawing the
 * request aborts its question. Nothing is published, so what is "sent" is the sentence asked.
 */
export function askingWire(approver: Approver): ApprovalWire {
  let desk: ApprovalCounter | undefined
  const asking = new Map<string, AbortController>()
  return {
    audience: approver.audience,
    unavailable: () => approver.unavailable?.(),
    answerTo(d) {
      desk = d
    },
    async send(request): Promise<Sent> {
      const question = new AbortController()
      asking.set(request.id, question)
      approver.request(request, question.signal).then(
        (d) =>
          void desk?.answer(request.id, {
            decision: d.decision,
            phone: d.by,
            ...(d.grant !== undefined && { grant: d.grant }),
          }),
        // Its own failure (the terminal closed; or its question aborted, the request already ended).
        (err: unknown) =>
          desk?.fail(request.id, err instanceof Error ? err : new Error(String(err))),
      )
      return { topic: '', message: request.action, phones: [], digest: request.argsDigest }
    },
    end(ending) {
      asking.get(ending.request.id)?.abort()
      asking.delete(ending.request.id)
      return undefined
    },
  }
}
