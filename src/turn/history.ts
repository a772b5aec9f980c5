import type { Message, ToolOutcome } from '../core/conversation.js'

/** What the model is told about a call whose answer was never stored. */
export const INTERRUPTED: ToolOutcome = {
  ok: false,
  code: 'NOC_ERR_CANCELLED',
  error:
    'interrupted: Nocturn stopped before this call finished (a restart or power cut); it did not complete, and any approval it was waiting for was never given',
}

/**
 * A stored conversation as a history every model accepts: each tool call answered by exactly one
 * tool result, right after the model turn that made it. The store keeps what happened, and a
 * process killed while a phone was deciding leaves a call with no result; Gemini refuses a
 * `functionCall` without its `functionResponse`, so the household's chat would be stuck. Here a
 * call left open gets the `INTERRUPTED` answer (not stored: the chat on the phone shows what
 * really happened), and a result whose call is not in the model turn before it is left out.
 * See docs/store.md ("Calls cut short").
 */
export function wellFormedHistory<M extends Message>(messages: readonly M[]): Message[] {
  const out: Message[] = []
  let open: { calls: Map<string, string>; channel: M['channel']; at: number } | undefined
  const closeOpen = () => {
    if (!open) return
    for (const [id, name] of open.calls) {
      out.push({
        role: 'tool',
        toolCallId: id,
        toolName: name,
        args: {},
        outcome: INTERRUPTED,
        channel: open.channel,
        at: open.at,
      })
    }
    open = undefined
  }
  for (const m of messages) {
    if (m.role === 'tool') {
      if (open?.calls.delete(m.toolCallId)) out.push(m)
      continue // an answer to no call in the turn before it: the model would refuse it
    }
    closeOpen()
    out.push(m)
    if (m.role === 'assistant' && m.toolCalls.length > 0) {
      open = {
        calls: new Map(m.toolCalls.map((c) => [c.id, c.name])),
        channel: m.channel,
        at: m.at,
      }
    }
  }
  // Calls still open at the end are the ones being run now: their answers come next.
  return out
}
