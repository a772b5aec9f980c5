import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/** docs/protocol.md: its worked examples are the tests' vectors, read from the doc itself. */
export const PROTOCOL_DOC = readFileSync(
  join(import.meta.dirname, '..', '..', 'docs', 'protocol.md'),
  'utf8',
)

/** The text of the doc's first ```name block; empty when there is none. */
export function docBlock(name: string): string {
  return new RegExp(`\`\`\`${name}\\n([\\s\\S]*?)\`\`\``).exec(PROTOCOL_DOC)?.[1] ?? ''
}

/** The doc's ```name block of `key: value` lines, as a record. */
export function docVector(name: string): Record<string, string> {
  return Object.fromEntries(
    docBlock(name)
      .trim()
      .split('\n')
      .map((line) => {
        const i = line.indexOf(': ')
        return [line.slice(0, i), line.slice(i + 2)]
      }),
  )
}

/** The text of each ```json block from heading `from` on (up to heading `to`, when given). */
export function docJsonBlocks(from: string, to?: string): string[] {
  const at = PROTOCOL_DOC.indexOf(from)
  const section =
    to === undefined ? PROTOCOL_DOC.slice(at) : PROTOCOL_DOC.slice(at, PROTOCOL_DOC.indexOf(to))
  return [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1] ?? '')
}

/** The request the doc's ```vector block signs: its example request without `digest` and `macs`. */
export const VECTOR_REQUEST = {
  v: 1,
  id: '7f3c9a4e-2b1d-4c8e-9f00-5a6b7c8d9e0f',
  device: 'kitchen',
  tool: 'unlock_door',
  action: 'unlock the front door',
  args: { door: 'front' },
  critical: true,
  channel: 'voice',
  conversation: 'conv-42',
  createdAt: 1764489600000,
  expiresAt: 1764489720000,
}

/** The decision the doc's ```vector block signs: its example decision, on VECTOR_REQUEST. */
export const VECTOR_DECISION = {
  id: VECTOR_REQUEST.id,
  decision: 'approve' as const,
  grant: 'session' as const,
  digest: docVector('vector')['request.digest'] ?? '',
  phone: 'anna',
  at: 1764489630000,
  nonce: 'q2VhZ3VsbC1ub25jZS0wMQ',
}
