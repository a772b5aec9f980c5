import { errorText } from '../../core/errors.js'
/**
 * doctor is a list of independent checks. Each looks at one thing a person would otherwise debug
 * by hand and says what it found; one failing never stops the others. Audio, GPIO and broker
 * checks join the list later.
 */
export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip'

export interface CheckResult {
  readonly status: CheckStatus
  /** One line. */
  readonly summary: string
  /** Further lines, shown indented. */
  readonly details?: readonly string[]
  /** For `--json`. */
  readonly data?: unknown
}

export interface Check<C> {
  readonly name: string
  run(ctx: C): Promise<CheckResult>
}

export interface NamedResult extends CheckResult {
  readonly name: string
}

export async function runChecks<C>(checks: readonly Check<C>[], ctx: C): Promise<NamedResult[]> {
  const out: NamedResult[] = []
  for (const c of checks) {
    try {
      out.push({ name: c.name, ...(await c.run(ctx)) })
    } catch (err) {
      out.push({
        name: c.name,
        status: 'fail',
        summary: `the check itself failed: ${errorText(err)}`,
      })
    }
  }
  return out
}

export function formatHuman(results: readonly NamedResult[]): string {
  const width = Math.max(...results.map((r) => r.name.length))
  const lines = results.flatMap((r) => [
    `${r.status.padEnd(5)} ${r.name.padEnd(width)}  ${r.summary}`,
    ...(r.details ?? []).map((d) => `      ${' '.repeat(width)}    ${d}`),
  ])
  return `${lines.join('\n')}\n`
}

export function formatJson(results: readonly NamedResult[]): string {
  return `${JSON.stringify({ ok: results.every((r) => r.status !== 'fail'), checks: results }, null, 2)}\n`
}
