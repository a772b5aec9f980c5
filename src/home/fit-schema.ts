import type { JsonSchema } from '../core/schema.js'

type Raw = Record<string, unknown>

const isRaw = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * A tool's input schema as HA serves it (voluptuous_openapi's output: `anyOf` for "a string or a
 * list", `format`, `uniqueItems`, `minItems`) brought into the subset a model accepts
 * (core/schema.ts) without losing what it means: "a string or a list of strings" becomes a list
 * (one item is still a list), and what a keyword said that the subset cannot is kept in the
 * description. Anything unreadable becomes a string the tool's own validation still checks at HA.
 */
export function fitSchema(raw: unknown): JsonSchema {
  const fitted = fitNode(raw)
  if (fitted.type === 'object') return fitted
  return { type: 'object', properties: {} }
}

function fitNode(raw: unknown, depth = 0): JsonSchema {
  if (!isRaw(raw) || depth > 8) return { type: 'string' }
  const description = typeof raw.description === 'string' ? raw.description : undefined
  const withDescription = <S extends JsonSchema>(s: S, extra?: string): S => {
    const text = [description, extra].filter(Boolean).join(' ')
    return text ? { ...s, description: text } : s
  }
  const branches = Array.isArray(raw.anyOf)
    ? raw.anyOf
    : Array.isArray(raw.oneOf)
      ? raw.oneOf
      : undefined
  if (branches && branches.length > 0) {
    const fitted = branches.map((b) => fitNode(b, depth + 1))
    // "One value or a list of them": the list says both, one value being a list of one.
    const list = fitted.find((b) => b.type === 'array')
    if (list) return withDescription(list)
    return withDescription((fitted[0] ?? { type: 'string' }) as JsonSchema)
  }
  let type = raw.type
  if (Array.isArray(type)) type = type.find((t) => t !== 'null')
  if (type === undefined && isRaw(raw.properties)) type = 'object'
  switch (type) {
    case 'object': {
      const properties: Record<string, JsonSchema> = {}
      if (isRaw(raw.properties)) {
        for (const [k, v] of Object.entries(raw.properties)) properties[k] = fitNode(v, depth + 1)
      }
      const required = Array.isArray(raw.required)
        ? raw.required.filter((r): r is string => typeof r === 'string' && r in properties)
        : []
      return withDescription({
        type: 'object',
        properties,
        ...(required.length > 0 && { required }),
      })
    }
    case 'array': {
      const items = fitNode(raw.items ?? { type: 'string' }, depth + 1)
      const maxItems = typeof raw.maxItems === 'number' ? raw.maxItems : undefined
      return withDescription({ type: 'array', items, ...(maxItems !== undefined && { maxItems }) })
    }
    case 'number':
    case 'integer': {
      const minimum = typeof raw.minimum === 'number' ? raw.minimum : undefined
      const maximum = typeof raw.maximum === 'number' ? raw.maximum : undefined
      return withDescription({
        type,
        ...(minimum !== undefined && { minimum }),
        ...(maximum !== undefined && { maximum }),
      })
    }
    case 'boolean':
      return withDescription({ type: 'boolean' })
    default: {
      const values = Array.isArray(raw.enum)
        ? raw.enum.filter((e): e is string => typeof e === 'string')
        : []
      const format = typeof raw.format === 'string' ? `(${raw.format})` : undefined
      return withDescription({ type: 'string', ...(values.length > 0 && { enum: values }) }, format)
    }
  }
}

/** Function names both model APIs accept (Gemini: a letter or _, then up to 63 of these). */
export function fitsModelName(name: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/.test(name)
}
