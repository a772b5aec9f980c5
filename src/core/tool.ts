import type { JsonSchema } from './schema.js'
import type { Tool } from './types.js'

/** What a model is told about a tool. */
export interface ToolDeclaration {
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
}

export function declarationOf(tool: Tool): ToolDeclaration {
  return { name: tool.name, description: tool.description, parameters: tool.parameters }
}

/** The human sentence for a call: the tool's own, or a plain fallback. */
export function actionOf(tool: Tool, args: unknown): string {
  try {
    if (tool.describe) return tool.describe(args)
  } catch {
    // A describe() that throws must not block the approval; fall back to the plain form.
  }
  return `run ${tool.name}`
}
