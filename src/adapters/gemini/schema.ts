import type { FunctionDeclaration, Schema, Type } from '@google/genai'
import type { JsonSchema } from '../../core/schema.js'
import type { ToolDeclaration } from '../../core/tool.js'
import { sdkEnum } from './sdk-enum.js'

const TYPES: Record<JsonSchema['type'], Type> = {
  object: sdkEnum<Type>('OBJECT'),
  string: sdkEnum<Type>('STRING'),
  number: sdkEnum<Type>('NUMBER'),
  integer: sdkEnum<Type>('INTEGER'),
  boolean: sdkEnum<Type>('BOOLEAN'),
  array: sdkEnum<Type>('ARRAY'),
}

/**
 * The tools' JSON-schema subset in Gemini's OpenAPI form (UPPER_SNAKE types, int64 bounds as
 * strings). `additionalProperties` has no counterpart and is dropped: the ToolSet validates
 * arguments itself before any tool runs.
 */
function toGeminiSchema(s: JsonSchema): Schema {
  const out: Schema = { type: TYPES[s.type] }
  if (s.description) out.description = s.description
  switch (s.type) {
    case 'object':
      if (s.properties) {
        out.properties = Object.fromEntries(
          Object.entries(s.properties).map(([k, v]) => [k, toGeminiSchema(v)]),
        )
      }
      if (s.required?.length) out.required = [...s.required]
      break
    case 'string':
      if (s.enum) out.enum = [...s.enum]
      if (s.minLength !== undefined) out.minLength = String(s.minLength)
      if (s.maxLength !== undefined) out.maxLength = String(s.maxLength)
      if (s.pattern !== undefined) out.pattern = s.pattern
      break
    case 'number':
    case 'integer':
      if (s.minimum !== undefined) out.minimum = s.minimum
      if (s.maximum !== undefined) out.maximum = s.maximum
      break
    case 'array':
      out.items = toGeminiSchema(s.items)
      if (s.maxItems !== undefined) out.maxItems = String(s.maxItems)
      break
    case 'boolean':
      break
  }
  return out
}

/** A tool as Gemini's FunctionDeclaration, without `behavior` (the live setup decides that). */
export function toFunctionDeclaration(t: ToolDeclaration): FunctionDeclaration {
  return { name: t.name, description: t.description, parameters: toGeminiSchema(t.parameters) }
}
