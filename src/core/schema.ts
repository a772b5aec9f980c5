/**
 * The subset of JSON Schema tools declare their parameters in — what both the typed and the live
 * model accept — and a validator for it, so arguments are checked before any tool runs.
 */
export type JsonSchema =
  | {
      readonly type: 'object'
      readonly description?: string
      readonly properties?: Readonly<Record<string, JsonSchema>>
      readonly required?: readonly string[]
      readonly additionalProperties?: boolean
    }
  | {
      readonly type: 'string'
      readonly description?: string
      readonly enum?: readonly string[]
      readonly minLength?: number
      readonly maxLength?: number
      readonly pattern?: string
    }
  | {
      readonly type: 'number' | 'integer'
      readonly description?: string
      readonly minimum?: number
      readonly maximum?: number
    }
  | { readonly type: 'boolean'; readonly description?: string }
  | {
      readonly type: 'array'
      readonly description?: string
      readonly items: JsonSchema
      readonly maxItems?: number
    }

/** Returns one readable line per problem, each naming the path, e.g. `args.minutes: expected integer`. */
export function validate(schema: JsonSchema, value: unknown, path = 'args'): string[] {
  switch (schema.type) {
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        return [`${path}: expected an object, got ${kindOf(value)}`]
      }
      const record = value as Record<string, unknown>
      const props = schema.properties ?? {}
      const problems: string[] = []
      for (const key of schema.required ?? []) {
        if (record[key] === undefined) problems.push(`${path}.${key}: required`)
      }
      for (const [key, v] of Object.entries(record)) {
        const sub = props[key]
        if (sub) problems.push(...validate(sub, v, `${path}.${key}`))
        else if (schema.additionalProperties === false) problems.push(`${path}.${key}: not allowed`)
      }
      return problems
    }
    case 'string': {
      if (typeof value !== 'string') return [`${path}: expected a string, got ${kindOf(value)}`]
      if (schema.enum && !schema.enum.includes(value)) {
        return [`${path}: expected one of ${schema.enum.join(', ')}`]
      }
      if (schema.minLength !== undefined && value.length < schema.minLength) {
        return [`${path}: shorter than ${schema.minLength}`]
      }
      if (schema.maxLength !== undefined && value.length > schema.maxLength) {
        return [`${path}: longer than ${schema.maxLength}`]
      }
      if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) {
        return [`${path}: does not match ${schema.pattern}`]
      }
      return []
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        const want = schema.type === 'integer' ? 'an integer' : 'a number'
        return [`${path}: expected ${want}, got ${kindOf(value)}`]
      }
      if (schema.type === 'integer' && !Number.isInteger(value)) {
        return [`${path}: expected an integer`]
      }
      if (schema.minimum !== undefined && value < schema.minimum) {
        return [`${path}: below ${schema.minimum}`]
      }
      if (schema.maximum !== undefined && value > schema.maximum) {
        return [`${path}: above ${schema.maximum}`]
      }
      return []
    }
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${path}: expected a boolean, got ${kindOf(value)}`]
    case 'array': {
      if (!Array.isArray(value)) return [`${path}: expected an array, got ${kindOf(value)}`]
      if (schema.maxItems !== undefined && value.length > schema.maxItems) {
        return [`${path}: more than ${schema.maxItems} items`]
      }
      return value.flatMap((item, i) => validate(schema.items, item, `${path}[${i}]`))
    }
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}
