import type { z } from 'zod'
import { configSchema, SECRET_KEYS } from './schema.js'

/**
 * A configuration that cannot be used. Each problem is one line that names the key and says what
 * is wrong and how to fix it; no line ever contains a secret's value.
 */
export class ConfigError extends Error {
  readonly problems: readonly string[]
  constructor(problems: readonly string[]) {
    super(problems.join('\n'))
    this.name = 'ConfigError'
    this.problems = problems
  }
}

/** Readable, secret-free lines for zod's issues, using the raw input to say what was found. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], raw: unknown): string[] {
  return issues.flatMap((issue) => {
    const path = issue.path.map(String)
    const key = keyOf(path)
    switch (issue.code) {
      case 'unrecognized_keys':
        return issue.keys.map((k) => {
          const hint = suggest(k, knownKeysAt(path))
          return `${keyOf([...path, k])}: unknown key${hint ? ` — did you mean "${hint}"?` : ' — remove it (see nocturn config --example)'}`
        })
      case 'invalid_type': {
        const found = kindOf(valueAt(raw, path))
        if (found === 'missing') return [`${key}: required (${article(issue.expected)})`]
        return [`${key}: expected ${article(issue.expected)}, got ${found}`]
      }
      case 'invalid_value': {
        const options = issue.values.map((v) => JSON.stringify(v)).join(', ')
        return [`${key}: expected one of ${options}${secretSafeGot(path, raw)}`]
      }
      case 'invalid_union':
        if (issue.discriminator !== undefined) {
          const kinds = kindsAt(path.slice(0, -1), issue.discriminator)
          const options = kinds.map((v) => JSON.stringify(v)).join(', ')
          return [`${key}: expected one of ${options}${secretSafeGot(path, raw)}`]
        }
        return [`${key}: expected ${unionHint(path)}, got ${kindOf(valueAt(raw, path))}`]
      case 'too_small':
      case 'too_big': {
        const dir = issue.code === 'too_small' ? 'at least' : 'at most'
        const what =
          issue.origin === 'string' ? ` characters` : issue.origin === 'array' ? ' items' : ''
        return [
          `${key}: must be ${dir} ${String(issue.code === 'too_small' ? issue.minimum : issue.maximum)}${what}${secretSafeGot(path, raw)}`,
        ]
      }
      default:
        return [`${key}: ${issue.message}${secretSafeGot(path, raw)}`]
    }
  })
}

function keyOf(path: readonly string[]): string {
  if (path.length === 0) return 'config'
  return path.reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '')
}

function valueAt(raw: unknown, path: readonly string[]): unknown {
  let v: unknown = raw
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined
    v = (v as Record<string, unknown>)[p]
  }
  return v
}

function kindOf(v: unknown): string {
  if (v === undefined) return 'missing'
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  if (typeof v === 'object') return 'an object'
  return `a ${typeof v}`
}

function article(expected: string): string {
  if (expected === 'object' || expected === 'array' || expected === 'int')
    return expected === 'int' ? 'an integer' : `an ${expected}`
  return `a ${expected}`
}

/** ` (got "x")` for ordinary keys, nothing for secrets. */
function secretSafeGot(path: readonly string[], raw: unknown): string {
  if (path.some((p) => SECRET_KEYS.has(p))) return ''
  const v = valueAt(raw, path)
  if (typeof v === 'string') return ` (got ${JSON.stringify(maskUserinfo(v).slice(0, 60))})`
  if (typeof v === 'number' || typeof v === 'boolean') return ` (got ${String(v)})`
  return ''
}

/**
 * A URL's password (`scheme://user:password@host`) replaced by `***`: a broker URL may carry one,
 * and a URL that fails validation is echoed back to say what was found.
 */
function maskUserinfo(text: string): string {
  return text.replace(/(\/\/[^/@:\s]*:)[^@\s]*@/g, '$1***@')
}

function unionHint(path: readonly string[]): string {
  const last = path.at(-1)
  if (last === 'payload') return 'a string or a JSON object'
  if (last === 'qos') return '0, 1 or 2'
  if (last === 'enabled' && path.at(-2) === 'localCheck') return 'true, false or "auto"'
  return 'another kind of value'
}

interface Def {
  type: string
  shape?: Record<string, { _zod: { def: Def } }>
  innerType?: { _zod: { def: Def } }
  element?: { _zod: { def: Def } }
  valueType?: { _zod: { def: Def } }
  /** A pipe's output (the provider: its kind filled in, then the union of kinds). */
  out?: { _zod: { def: Def } }
  options?: readonly { _zod: { def: Def } }[]
  /** A literal's values (a discriminator's). */
  values?: readonly unknown[]
}

/**
 * The schema at `path`, defaults, optionals and pipes looked through. A list where the path goes
 * on with a key (not an index) is one object written alone, checked as a list of one (`provider`).
 */
function defAt(path: readonly string[]): Def | undefined {
  let def: Def | undefined = (configSchema as unknown as { _zod: { def: Def } })._zod.def
  const unwrap = () => {
    for (;;) {
      if (def && (def.type === 'default' || def.type === 'optional') && def.innerType) {
        def = def.innerType._zod.def
      } else if (def?.type === 'pipe' && def.out) def = def.out._zod.def
      else return
    }
  }
  const alone = () => {
    unwrap()
    if (def?.type === 'array') def = def.element?._zod.def
    unwrap()
  }
  for (const p of path) {
    unwrap()
    if (def?.type === 'array' && !/^\d+$/.test(p)) alone()
    if (!def) return undefined
    if (def.type === 'object') def = def.shape?.[p]?._zod.def
    else if (def.type === 'array') def = def.element?._zod.def
    else if (def.type === 'record') def = def.valueType?._zod.def
    else return undefined
  }
  unwrap()
  return def
}

/** The schema of the object at `path`: a list's element when one object stands for the list. */
function objectDefAt(path: readonly string[]): Def | undefined {
  const def = defAt(path)
  if (def?.type !== 'array') return def
  return defAt([...path, '0'])
}

/** The keys the object at `path` accepts, read from the schema itself, for "did you mean". */
function knownKeysAt(path: readonly string[]): string[] {
  // A union of objects (the provider's kinds) takes the keys of all of them.
  const keysOf = (d: Def | undefined): string[] =>
    d?.type === 'object'
      ? Object.keys(d.shape ?? {})
      : d?.type === 'union'
        ? [...new Set((d.options ?? []).flatMap((o) => keysOf(o._zod.def)))]
        : []
  return keysOf(objectDefAt(path))
}

/** The values the discriminator `key` takes in the union at `path` (the provider's kinds). */
function kindsAt(path: readonly string[], key: string): unknown[] {
  const union = objectDefAt(path)
  return (union?.options ?? []).flatMap((o) => o._zod.def.shape?.[key]?._zod.def.values ?? [])
}

/** The closest known key within two edits, if any. */
function suggest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined
  let bestD = 3
  for (const k of known) {
    const d = distance(word.toLowerCase(), k.toLowerCase())
    if (d < bestD) {
      best = k
      bestD = d
    }
  }
  return best
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number
    row[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] as number
      row[j] = Math.min(
        (row[j] as number) + 1,
        (row[j - 1] as number) + 1,
        prev + (a[i - 1] === b[j - 1] ? 0 : 1),
      )
      prev = tmp
    }
  }
  return row[b.length] as number
}
