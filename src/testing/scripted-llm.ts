import type { Message } from '../core/conversation.js'
import type { LLM, LLMAnswer, LLMRequest } from '../ports/llm.js'

/** One scripted step: a fixed answer, or a function of what the model was sent. */
export type ScriptStep = LLMAnswer | ((request: LLMRequest) => LLMAnswer)

/**
 * A scripted LLM: answers each `next()` with the next step of its script and records every
 * request, so tests (and the offline run) can check exactly what the model was shown.
 */
export class ScriptedLLM implements LLM {
  readonly requests: LLMRequest[] = []
  readonly #steps: ScriptStep[]

  constructor(steps: ScriptStep[]) {
    this.#steps = [...steps]
  }

  async next(request: LLMRequest, signal: AbortSignal): Promise<LLMAnswer> {
    if (signal.aborted) throw new Error('aborted')
    this.requests.push({ ...request, history: [...request.history] })
    const step = this.#steps.shift()
    if (!step) return { text: '(the script has ended)', toolCalls: [] }
    const answer = typeof step === 'function' ? step(request) : step
    if (answer.text) request.onText?.(answer.text)
    return answer
  }
}

/** The tool results of the last step in a history, for scripts that react to them. */
export function lastToolResults(history: readonly Message[]): Extract<Message, { role: 'tool' }>[] {
  const out: Extract<Message, { role: 'tool' }>[] = []
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]
    if (m?.role !== 'tool') break
    out.unshift(m)
  }
  return out
}
