import type { Content, Part } from '@google/genai'
import type { Message } from '../../core/conversation.js'

/**
 * A stored conversation as Gemini `contents`: user text, model text with its function calls, and
 * tool results as function responses (with the call's id and name) in a user turn. Consecutive tool
 * results share one turn, as the API expects all answers to one model turn together.
 * `signatureOf` returns the thought signature Gemini 3 requires echoed on a function call.
 */
export function toContents(
  history: readonly Message[],
  signatureOf: (callId: string) => string | undefined = () => undefined,
): Content[] {
  const out: Content[] = []
  for (const m of history) {
    if (m.role === 'user') {
      out.push({ role: 'user', parts: [{ text: m.text }] })
    } else if (m.role === 'assistant') {
      const parts: Part[] = []
      if (m.text) parts.push({ text: m.text })
      for (const c of m.toolCalls) {
        const part: Part = {
          functionCall: { id: c.id, name: c.name, args: asRecord(c.args) },
        }
        const sig = signatureOf(c.id)
        if (sig) part.thoughtSignature = sig
        parts.push(part)
      }
      if (parts.length > 0) out.push({ role: 'model', parts })
    } else {
      const response = m.outcome.ok
        ? { output: m.outcome.value }
        : { error: m.outcome.error, code: m.outcome.code }
      const part: Part = { functionResponse: { id: m.toolCallId, name: m.toolName, response } }
      const last = out.at(-1)
      if (last?.role === 'user' && last.parts?.every((p) => p.functionResponse)) {
        last.parts.push(part)
      } else {
        out.push({ role: 'user', parts: [part] })
      }
    }
  }
  return out
}

/** Only the spoken words of a history, for seeding a live session (which takes text turns). */
export function toTextTurns(history: readonly Message[]): Content[] {
  const out: Content[] = []
  for (const m of history) {
    if (m.role === 'user' && m.text) out.push({ role: 'user', parts: [{ text: m.text }] })
    if (m.role === 'assistant' && m.text) out.push({ role: 'model', parts: [{ text: m.text }] })
  }
  return out
}

function asRecord(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : {}
}
