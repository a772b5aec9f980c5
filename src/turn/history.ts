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
 * tool result. The store keeps what happened, and a process killed while a phone was deciding
 * leaves a call with no result; Gemini refuses a `functionCall` without its `functionResponse`, so
 * the household's chat would be stuck. Here a call never answered gets the `INTERRUPTED` answer
 * right after the model turn that made it (not stored: the chat on the phone shows what really
 * happened), and a result for a call that was never made is left out. Results that arrive later
 * (a spoken session's asynchronous calls answer after the model has spoken on) stay where they
 * are. See docs/store.md ("Calls cut short").
 */
export function wellFormedHistory<M extends Message>(messages: readonly M[]): Message[] {
  const called = new Set<string>()
  const answered = new Set<string>()
  for (const m of messages) {
    if (m.role === 'assistant') for (const c of m.toolCalls) called.add(c.id)
    else if (m.role === 'tool') answered.add(m.toolCallId)
  }
  const out: Message[] = []
  const given = new Set<string>()
  for (const m of messages) {
    if (m.role === 'tool') {
      // Once per call, and only for calls that were made.
      if (called.has(m.toolCallId) && !given.has(m.toolCallId)) {
        given.add(m.toolCallId)
        out.push(m)
      }
      continue
    }
    out.push(m)
    if (m.role !== 'assistant') continue
    for (const c of m.toolCalls) {
      if (answered.has(c.id)) continue
      given.add(c.id)
      out.push({
        role: 'tool',
        toolCallId: c.id,
        toolName: c.name,
        args: c.args,
        outcome: INTERRUPTED,
        channel: m.channel,
        at: m.at,
      })
    }
  }
  return out
}
