import { randomUUID } from 'node:crypto'
import type { GenerateContentConfig, GenerateContentResponse } from '@google/genai'
import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { LLM, LLMAnswer, LLMRequest, LLMToolCall } from '../../ports/llm.js'
import { createClient, type GenAI } from './client.js'
import { toContents } from './contents.js'
import { redactKey } from './redact.js'
import { toFunctionDeclaration } from './schema.js'

export interface GeminiLLMOptions {
  readonly apiKey: string
  /** A model that supports `generateContent` (live-only models answer 404). */
  readonly model: string
  readonly baseUrl?: string | undefined
  readonly logger: Logger
}

/**
 * LLM over `generateContent`, for typed turns: the persona as system instruction, the tools as
 * function declarations (no `behavior`: that is a live-only field), the stored conversation as
 * contents with function calls and responses matched by id and name. With `onText` it streams.
 */
export class GeminiLLM implements LLM {
  /** Made on the first turn: the SDK loads only when a phone first types (client.ts). */
  #ai: Promise<GenAI> | undefined
  readonly #options: GeminiLLMOptions
  readonly #log: Logger
  /**
   * Gemini 3 requires each function call's `thoughtSignature` echoed back with the call; the
   * transcript does not keep it, so this adapter does, by call id, for as long as it lives.
   */
  readonly #signatures = new Map<string, string>()

  constructor(options: GeminiLLMOptions) {
    this.#options = options
    this.#log = options.logger.child({ component: 'gemini-llm', model: options.model })
  }

  async next(request: LLMRequest, signal: AbortSignal): Promise<LLMAnswer> {
    const contents = toContents(request.history, (id) => this.#signatures.get(id))
    const config: GenerateContentConfig = {
      systemInstruction: request.persona.instruction,
      abortSignal: signal,
      ...(request.tools.length > 0
        ? { tools: [{ functionDeclarations: request.tools.map(toFunctionDeclaration) }] }
        : {}),
    }
    const answer = { text: '', toolCalls: [] as LLMToolCall[] }
    const params = { model: this.#options.model, contents, config }
    try {
      this.#ai ??= createClient({ apiKey: this.#options.apiKey, baseUrl: this.#options.baseUrl })
      const ai = await this.#ai
      if (request.onText) {
        for await (const chunk of await ai.models.generateContentStream(params)) {
          this.#take(chunk, answer, request.onText)
        }
      } else {
        this.#take(await ai.models.generateContent(params), answer)
      }
    } catch (err) {
      if (signal.aborted) throw err
      const message = redactKey(errorText(err), this.#options.apiKey)
      this.#log.warn({ event: 'generate_content_failed', err: message }, 'generateContent failed')
      throw new Error(`Gemini generateContent failed: ${message}`)
    }
    this.#log.debug(
      { toolCalls: answer.toolCalls.length, chars: answer.text.length },
      'generateContent answered',
    )
    return answer
  }

  #take(
    r: GenerateContentResponse,
    into: { text: string; toolCalls: LLMToolCall[] },
    onText?: (delta: string) => void,
  ): void {
    for (const part of r.candidates?.[0]?.content?.parts ?? []) {
      if (part.thought) continue
      if (typeof part.text === 'string' && part.text !== '') {
        into.text += part.text
        onText?.(part.text)
      }
      const fc = part.functionCall
      if (fc?.name) {
        // The Developer API often sends calls without ids; the transcript needs one to pair answers.
        const id = fc.id || `call-${randomUUID()}`
        if (part.thoughtSignature) this.#signatures.set(id, part.thoughtSignature)
        into.toolCalls.push({ id, name: fc.name, args: fc.args ?? {} })
      }
    }
  }
}
