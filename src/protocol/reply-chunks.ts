/**
 * Splits a list into slices whose JSON stays under `budget` bytes, so every reply fits the
 * protocol's 16 KiB limit with room for the envelope. An item that alone is too large is replaced
 * by `shrink(item)` (a marker saying it was cut), never dropped silently.
 */
export function chunkItems<T>(
  items: readonly T[],
  budget: number,
  shrink: (item: T) => unknown,
): unknown[][] {
  const chunks: unknown[][] = []
  let current: unknown[] = []
  let size = 2
  for (const item of items) {
    let value: unknown = item
    let bytes = Buffer.byteLength(JSON.stringify(value)) + 1
    if (bytes > budget) {
      value = shrink(item)
      bytes = Buffer.byteLength(JSON.stringify(value)) + 1
    }
    if (current.length > 0 && size + bytes > budget) {
      chunks.push(current)
      current = []
      size = 2
    }
    current.push(value)
    size += bytes
  }
  if (current.length > 0) chunks.push(current)
  return chunks
}

/**
 * Splits text into pieces whose JSON string form stays under `budget` bytes (escapes counted), at
 * code point boundaries so no piece ends inside a surrogate pair. Joined, the pieces are the text.
 */
export function splitText(text: string, budget: number): string[] {
  if (jsonBytes(text) <= budget) return [text]
  const pieces: string[] = []
  let start = 0
  let size = 2
  let i = 0
  for (const ch of text) {
    const bytes = jsonBytes(ch) - 2
    if (size + bytes > budget && i > start) {
      pieces.push(text.slice(start, i))
      start = i
      size = 2
    }
    size += bytes
    i += ch.length
  }
  pieces.push(text.slice(start))
  return pieces
}

function jsonBytes(s: string): number {
  return Buffer.byteLength(JSON.stringify(s))
}
