import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { LLM, LLMAnswer, LLMRequest, LLMToolCall } from '../../ports/llm.js'
import { toChatMessages, toChatTool } from './chat-messages.js'
import { createRestClient, type RestClient, redactKey } from './client.js'

export interface OpenAILLMOptions {
  readonly apiKey: string
  /** A chat-completions model (realtime models are not). */
  readonly model: string
  readonly baseUrl?: string | undefined
  readonly logger: Logger
}

/**
 * LLM over chat completions, for typed turns: the persona as the system message, the tools as
 * functions, the stored conversation as messages (chat-messages.ts). One request a turn, not
 * streamed: `onText` gets the whole text at once.
 */
export class OpenAILLM implements LLM {
  #client: Promise<RestClient> | undefined
  readonly #o: OpenAILLMOptions
  readonly #log: Logger

  constructor(o: OpenAILLMOptions) {
    this.#o = o
    this.#log = o.logger.child({ component: 'openai-llm', model: o.model })
  }

  async next(request: LLMRequest, signal: AbortSignal): Promise<LLMAnswer> {
    try {
      this.#client ??= createRestClient(this.#o)
      const client = await this.#client
      const r = await client.chat.completions.create(
        {
          model: this.#o.model,
          messages: toChatMessages(request.persona.instruction, request.history),
          ...(request.tools.length > 0 ? { tools: request.tools.map(toChatTool) } : {}),
        },
        { signal },
      )
      const msg = r.choices[0]?.message
      const text = msg?.content ?? ''
      const toolCalls: LLMToolCall[] = []
      for (const c of msg?.tool_calls ?? []) {
        if (c.type !== 'function') continue
        toolCalls.push({ id: c.id, name: c.function.name, args: parse(c.function.arguments) })
      }
      if (text) request.onText?.(text)
      return { text, toolCalls }
    } catch (err) {
      if (signal.aborted) throw err
      const message = redactKey(errorText(err), this.#o.apiKey)
      this.#log.warn({ event: 'chat_completion_failed', err: message }, 'chat completion failed')
      throw new Error(`OpenAI chat completion failed: ${message}`)
    }
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text || '{}')
  } catch {
    return text
  }
}
