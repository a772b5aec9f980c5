import { sentence } from './words.js'

interface Known {
  readonly tool: string
  readonly args: unknown
  readonly action: string
}

/**
 * The sentence each speaker used for a tool and its arguments ("switch on the porch light"),
 * learnt from the requests and endings this phone verified: a grant carries only the tool's name
 * and arguments, and a household reads sentences, not tool names (issue 44, item 3).
 */
export class ActionWords {
  readonly #known = new Map<string, Known[]>()

  learn(speaker: string, tool: string, args: unknown, action: string): void {
    const list = (this.#known.get(speaker) ?? []).filter(
      (k) => !(k.tool === tool && same(k.args, args)),
    )
    list.unshift({ tool, args, action })
    this.#known.set(speaker, list.slice(0, 200))
  }

  /**
   * The sentence for a call with exactly `args`, or for any call with the `pattern`'s values;
   * undefined when this phone has seen none.
   */
  find(speaker: string, tool: string, values: unknown, exact: boolean): string | undefined {
    return this.#known
      .get(speaker)
      ?.find((k) => k.tool === tool && (exact ? same(k.args, values) : has(k.args, values)))?.action
  }
}

/** A tool's name in words, for a call this phone never saw asked: "switch on porch light". */
export function toolWords(tool: string): string {
  return sentence(tool.replace(/[_-]+/g, ' ').trim())
}

function same(a: unknown, b: unknown): boolean {
  return has(a, b) && has(b, a)
}

/** Whether `args` has every value of `values` (objects, compared key by key as JSON). */
function has(args: unknown, values: unknown): boolean {
  if (typeof values !== 'object' || values === null)
    return JSON.stringify(args) === JSON.stringify(values)
  if (typeof args !== 'object' || args === null) return Object.keys(values).length === 0
  const a = args as Record<string, unknown>
  return Object.entries(values).every(([k, v]) => JSON.stringify(a[k]) === JSON.stringify(v))
}
