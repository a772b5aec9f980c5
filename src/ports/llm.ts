import type { Message } from '../core/conversation.js'
import type { Persona } from '../core/persona.js'
import type { ToolDeclaration } from '../core/tool.js'

/**
 * LLM: one typed turn — given the conversation so far and the tools, the model answers with text,
 * asks for tool calls, or both; then the call returns. The turn loop drives it.
 */
export interface LLM {
  next(request: LLMRequest, signal: AbortSignal): Promise<LLMAnswer>
}

export interface LLMRequest {
  readonly persona: Persona
  readonly history: readonly Message[]
  readonly tools: readonly ToolDeclaration[]
  /** Called with text as it streams, where the model streams; the full text is still in the answer. */
  readonly onText?: ((delta: string) => void) | undefined
}

export interface LLMToolCall {
  readonly id: string
  readonly name: string
  readonly args: unknown
}

export interface LLMAnswer {
  readonly text: string
  readonly toolCalls: readonly LLMToolCall[]
}
