import { createHash } from 'node:crypto'
import { canonicalJson } from './canonical-json.js'

/** Hex SHA-256 of the canonical JSON of `value`. */
export function digestOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex')
}
