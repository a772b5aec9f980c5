import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

// docs/architecture.md is read by a newcomer looking for the code: every name it puts in
// backticks must be there. A path (`core/gate.ts`, `adapters/mqtt/`) must exist from the
// repository's root or from src/, or end the path of a file in src/ (a section about app/compose/
// names `broker.ts`); an identifier (`MqttApprover`, `CallLedger.withdraw`) must be a
// word of the code. Anything else in backticks (a command, a value, a snippet) is not checked.

const ROOT = join(import.meta.dirname, '..', '..')
const CODE_DIRS = ['src', 'web/src', 'test', 'bench', 'scripts']

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) return name === 'node_modules' ? [] : files(p)
    return /\.(ts|mjs|cjs|js)$/.test(name) ? [p] : []
  })
}

const srcFiles = files(join(ROOT, 'src')).map((f) => f.slice(ROOT.length))
const code = CODE_DIRS.flatMap((d) => files(join(ROOT, d)))
  .concat(['.dependency-cruiser.cjs', 'knip.json', 'package.json'].map((f) => join(ROOT, f)))
  .map((f) => readFileSync(f, 'utf8'))
  .join('\n')
const words = new Set(code.match(/[A-Za-z_$][\w$]*/g))

/** The backticked spans of the doc outside its fenced blocks, whitespace inside a span closed up. */
function spans(doc: string): string[] {
  const prose = doc.replace(/```[\s\S]*?```/g, '')
  return [...prose.matchAll(/`([^`]+)`/g)].map((m) => (m[1] ?? '').replace(/\s*\n\s*/g, ''))
}

const PATH = /^\.?[\w.-]+(\/[\w.-]*)+$|^[\w.-]+\.(ts|md|cjs|mjs|json)$/
const IDENTIFIER = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*(\(\w*\))?$/

/** What a span names that is not there; undefined when it is there or names nothing checkable. */
function missing(span: string): string | undefined {
  if (PATH.test(span)) {
    const there =
      [span, `src/${span}`].some((p) => existsSync(join(ROOT, p))) ||
      srcFiles.some((f) => f.endsWith(`/${span}`))
    return there ? undefined : span
  }
  if (IDENTIFIER.test(span)) {
    const parts = span.replace(/\(\w*\)$/, '').split('.')
    return parts.every((p) => words.has(p)) ? undefined : span
  }
  return undefined
}

describe('docs/architecture.md', () => {
  it('names only what exists: every backticked path and identifier is in the code', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8')
    const named = spans(doc)
    expect(named.length).toBeGreaterThan(100)
    expect(named.map(missing).filter((m) => m !== undefined)).toEqual([])
  })
})
