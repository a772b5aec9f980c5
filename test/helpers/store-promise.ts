import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** One row of docs/store.md's table "What a fault can take, in numbers". */
export interface StorePromise {
  readonly fault: string
  readonly lost: string
  readonly said: string
  /** The test files the row names. */
  readonly tests: readonly string[]
}

/** Every row of the table, read from the doc itself. */
export function storePromises(): StorePromise[] {
  const doc = readFileSync(join(import.meta.dirname, '../../docs/store.md'), 'utf8')
  const table = doc.split('**What a fault can take, in numbers.**')[1] ?? ''
  return table
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Fault '))
    .map((line) => {
      const [fault = '', lost = '', said = '', tests = ''] = line
        .slice(2, -2)
        .split(' | ')
        .map((c) => c.trim())
      return { fault, lost, said, tests: [...tests.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '') }
    })
}

/** The row whose fault starts with `fault`. */
export function storePromise(fault: string): StorePromise {
  const row = storePromises().find((r) => r.fault.startsWith(fault))
  if (!row) throw new Error(`docs/store.md has no fault "${fault}…" in its table`)
  return row
}

/** The number `pattern` (one group) finds in `text`; throws when the doc no longer says it. */
export function numberIn(text: string, pattern: RegExp): number {
  const m = pattern.exec(text)
  if (!m?.[1]) throw new Error(`"${text}" no longer says ${pattern}`)
  return Number(m[1])
}
