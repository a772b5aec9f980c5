import type {
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions'
import type { Message, ToolOutcome } from '../../core/conversation.js'
import type { ToolDeclaration } from '../../core/tool.js'

/**
 * A stored conversation as chat-completions messages. The API wants each assistant message's
 * tool calls answered by tool messages right after it; a spoken session writes an outcome when it
 * lands (after other words, or never, for a call cut short), so outcomes are moved up to their
 * call and a call without one is answered with an error the model can read.
 */
export function toChatMessages(
  instruction: string,
  history: readonly Message[],
): ChatCompletionMessageParam[] {
  const outcomes = new Map<string, ToolOutcome>()
  for (const m of history) if (m.role === 'tool') outcomes.set(m.toolCallId, m.outcome)
  const out: ChatCompletionMessageParam[] = [{ role: 'system', content: instruction }]
  for (const m of history) {
    if (m.role === 'user') out.push({ role: 'user', content: m.text })
    else if (m.role === 'assistant') {
      if (m.toolCalls.length === 0) {
        if (m.text) out.push({ role: 'assistant', content: m.text })
        continue
      }
      out.push({
        role: 'assistant',
        content: m.text || null,
        tool_calls: m.toolCalls.map((c) => ({
          id: c.id,
          type: 'function' as const,
          function: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
        })),
      })
      for (const c of m.toolCalls) {
        const o = outcomes.get(c.id)
        const content = o
          ? o.ok
            ? { output: o.value }
            : { error: o.error, code: o.code }
          : { error: 'no result was recorded for this call' }
        out.push({ role: 'tool', tool_call_id: c.id, content: JSON.stringify(content) })
      }
    }
  }
  return out
}

export function toChatTool(t: ToolDeclaration): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters as never },
  }
}
