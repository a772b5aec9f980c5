import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

// The project's habits that a reader cannot keep by eye across the whole tree (the brief's
// "Style"): checked over the sources as written.

const ROOT = join(import.meta.dirname, '..')

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name)
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : []
  })
}

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
}

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node)
  ts.forEachChild(node, (child) => walk(child, visit))
}

// The pino wrapper passes lines through.
const LOG_EXEMPT = [/^src\/app\/logger\.ts$/]

/** Every `log.warn(…)`/`logger.error(…)` whose fields lack an `event`, or log `err` as `.message`. */
function logProblems(): string[] {
  const problems: string[] = []
  for (const file of tsFiles(join(ROOT, 'src'))) {
    const rel = relative(ROOT, file)
    if (LOG_EXEMPT.some((r) => r.test(rel))) continue
    const sf = parse(file)
    walk(sf, (n) => {
      if (!ts.isCallExpression(n) || !ts.isPropertyAccessExpression(n.expression)) return
      const level = n.expression.name.text
      if (level !== 'warn' && level !== 'error') return
      // A logger by name: log, logger, #log, this.#options.logger…; a stream's `error` is not one.
      if (!/(log|logger)$/i.test(n.expression.expression.getText(sf))) return
      const where = `${rel}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`
      const fields = n.arguments[0]
      if (!fields || !ts.isObjectLiteralExpression(fields)) {
        problems.push(`${where}: ${level} without a fields object`)
        return
      }
      const props = fields.properties
      // A spread is trusted to carry the event (RejectionLog's callers give theirs).
      const named = (p: ts.ObjectLiteralElementLike, name: string) =>
        p.name !== undefined && ts.isIdentifier(p.name) && p.name.text === name
      if (!props.some((p) => named(p, 'event') || ts.isSpreadAssignment(p))) {
        problems.push(`${where}: ${level} without an event`)
      }
      for (const p of props) {
        if (!ts.isPropertyAssignment(p) || !named(p, 'err')) continue
        const v = p.initializer
        if (ts.isPropertyAccessExpression(v) && v.name.text === 'message') {
          problems.push(`${where}: err logged as ${v.getText(sf)}; use errorText(err)`)
        }
      }
    })
  }
  return problems
}

describe('habits of src/', () => {
  it('every warn and error log line carries an event, and an error as errorText(err)', () => {
    expect(logProblems()).toEqual([])
  })
})

/** The error codes docs/errors.md documents, from its tables. */
function documentedCodes(): string[] {
  const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8')
  return [
    ...new Set([...doc.matchAll(/^\| `(NOC_ERR_[A-Z0-9_]+)` \|/gm)].map((m) => m[1] as string)),
  ]
}

/** The codes the code gives an error, as string literals outside the list of them in core/errors.ts. */
function usedCodes(): string[] {
  const codes = new Set<string>()
  for (const file of tsFiles(join(ROOT, 'src'))) {
    const sf = parse(file)
    walk(sf, (n) => {
      if (!ts.isStringLiteral(n) || !/^NOC_ERR_[A-Z0-9_]+$/.test(n.text)) return
      // The list itself names every code; what counts is a code some module uses.
      if (ts.isArrayLiteralExpression(n.parent) && relative(ROOT, file) === 'src/core/errors.ts') {
        return
      }
      codes.add(n.text)
    })
  }
  return [...codes]
}

describe('error codes', () => {
  it('the documented codes are the ones the code uses, and the ones core/errors.ts lists', async () => {
    const { ERROR_CODES } = await import('../src/core/errors.js')
    const documented = documentedCodes().sort()
    expect(usedCodes().sort()).toEqual(documented)
    expect([...ERROR_CODES].sort()).toEqual(documented)
  })
})

/** Every class in src/ longer than `limit` lines (from `class` to its closing brace), with its length. */
function classesOver(limit: number): string[] {
  const over: string[] = []
  for (const file of tsFiles(join(ROOT, 'src'))) {
    const sf = parse(file)
    walk(sf, (n) => {
      if (!ts.isClassDeclaration(n) && !ts.isClassExpression(n)) return
      const line = (pos: number) => sf.getLineAndCharacterOfPosition(pos).line
      const length = line(n.getEnd()) - line(n.getStart()) + 1
      const name = n.name?.text ?? '(anonymous)'
      if (length > limit) over.push(`${relative(ROOT, file)} ${name}: ${length} lines`)
    })
  }
  return over
}

describe('class size', () => {
  it('no class in src/ is over 300 lines (issue 45: a class that long holds more than one concept)', () => {
    expect(classesOver(300)).toEqual([])
  })
})
