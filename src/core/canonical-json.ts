// No Node import here: the phone app bundles this through src/protocol/forms.ts.
/**
 * Canonical JSON: object keys sorted, no whitespace. Two equal argument objects give the same
 * string whatever order the model wrote them in, so a digest binds to the arguments, not the text.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value)
    return s === undefined ? 'null' : s
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const keys = Object.keys(value as object)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort()
  const body = keys.map(
    (k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`,
  )
  return `{${body.join(',')}}`
}
