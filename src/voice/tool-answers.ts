import type { ToolOutcome } from '../core/conversation.js'
import type { PendingNotice } from '../core/types.js'
import type { LiveToolResponse, Scheduling } from '../ports/live-llm.js'

interface CallRef {
  readonly id: string
  readonly name: string
}

/**
 * The interim answer while a phone decides (docs/voice-driver.md, rule 3): what is pending and where, as the
 * answer to the call — never as injected text, which counts as the user speaking. `WHEN_IDLE`:
 * the model finishes its sentence, then says what it is waiting for.
 */
export function interimAnswer(call: CallRef, notice: PendingNotice): LiveToolResponse {
  return {
    id: call.id,
    name: call.name,
    response: { status: 'waiting_for_approval', approver: notice.audience, action: notice.action },
    willContinue: true,
    scheduling: 'WHEN_IDLE',
  }
}

/**
 * The one final answer: the result, or `{ error }` with a sentence the model can say. With
 * `scheduling` (non-blocking calls) it says how late it is; after an interim it closes the
 * generator with `willContinue: false`. Without (blocking calls) it carries neither field.
 */
export function finalAnswer(
  call: CallRef,
  outcome: ToolOutcome,
  nonBlocking?: { readonly scheduling: Scheduling; readonly afterInterim: boolean },
): LiveToolResponse {
  // docs/errors.md promises the model a code beside the sentence.
  const response = outcome.ok
    ? { output: outcome.value }
    : { error: outcome.error, code: outcome.code }
  if (!nonBlocking) return { id: call.id, name: call.name, response }
  return {
    id: call.id,
    name: call.name,
    response,
    scheduling: nonBlocking.scheduling,
    ...(nonBlocking.afterInterim ? { willContinue: false } : {}),
  }
}
