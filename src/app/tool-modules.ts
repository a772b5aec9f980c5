import { isAbsolute } from 'node:path'
import { pathToFileURL } from 'node:url'
import { errorText } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import type { Tool } from '../core/types.js'
import type { Clock } from '../ports/clock.js'
import type { Publisher } from '../ports/publisher.js'

/** What a local tool module's factory is given. */
export interface ToolModuleDeps {
  readonly clock: Clock
  readonly logger: Logger
  readonly publisher?: Publisher
}

class ToolModuleError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ToolModuleError'
  }
}

const NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,63}$/
const POLICIES = new Set(['allow', 'ask', 'deny'])

/**
 * Loads the household's own tools (`tools.modules`). A module's default export is a tool, a list
 * of tools, or a function of `{ clock, logger, publisher }` returning either (async allowed). Each
 * tool is checked before it is registered; a bad module stops the start with a message naming the
 * config key, the file and what is wrong — a half-loaded tool set would be worse.
 */
export async function loadToolModules(
  paths: readonly string[],
  deps: ToolModuleDeps,
): Promise<Tool[]> {
  const tools: Tool[] = []
  const seen = new Map<string, string>()
  for (const [i, path] of paths.entries()) {
    const key = `tools.modules[${i}]`
    if (!isAbsolute(path)) throw new ToolModuleError(`${key}: ${path} must be an absolute path`)
    let mod: { default?: unknown }
    try {
      mod = (await import(pathToFileURL(path).href)) as { default?: unknown }
    } catch (err) {
      const code = (err as { code?: string }).code
      const why = code === 'ERR_MODULE_NOT_FOUND' ? 'file not found' : errorText(err)
      throw new ToolModuleError(`${key}: cannot load ${path} (${why.split('\n')[0]})`)
    }
    let exported = mod.default
    if (exported === undefined) {
      throw new ToolModuleError(
        `${key}: ${path} has no default export — export a tool, a list of tools, or a function returning them`,
      )
    }
    if (typeof exported === 'function') {
      try {
        exported = await (exported as (d: ToolModuleDeps) => unknown)(deps)
      } catch (err) {
        throw new ToolModuleError(`${key}: ${path}: its factory threw: ${errorText(err)}`)
      }
    }
    const list = Array.isArray(exported) ? exported : [exported]
    for (const [j, t] of list.entries()) {
      const problem = checkTool(t)
      const where = list.length > 1 || Array.isArray(exported) ? `${path} tool ${j}` : path
      if (problem) throw new ToolModuleError(`${key}: ${where}: ${problem}`)
      const tool = t as Tool
      const other = seen.get(tool.name)
      if (other)
        throw new ToolModuleError(
          `${key}: ${where}: the name "${tool.name}" is already used by ${other}`,
        )
      seen.set(tool.name, path)
      tools.push(tool)
    }
    deps.logger.info(
      { module: path, tools: list.map((t) => (t as Tool).name) },
      'tool module loaded',
    )
  }
  return tools
}

function checkTool(t: unknown): string | undefined {
  if (t === null || typeof t !== 'object') return 'not a tool object'
  const o = t as Record<string, unknown>
  if (typeof o.name !== 'string' || !NAME.test(o.name))
    return 'name must be letters, digits and _ (at most 64)'
  if (typeof o.description !== 'string' || o.description.trim() === '')
    return `${o.name}: description must be a non-empty string`
  const params = o.parameters as { type?: unknown } | undefined
  if (!params || typeof params !== 'object' || params.type !== 'object') {
    return `${o.name}: parameters must be a JSON schema with type "object"`
  }
  if (typeof o.call !== 'function') return `${o.name}: call(ctx, args) must be a function`
  if (o.describe !== undefined && typeof o.describe !== 'function')
    return `${o.name}: describe must be a function`
  if (o.critical !== undefined && typeof o.critical !== 'boolean')
    return `${o.name}: critical must be true or false`
  if (o.policy !== undefined) {
    if (typeof o.policy !== 'object' || o.policy === null)
      return `${o.name}: policy must be { voice?, text? }`
    for (const [ch, p] of Object.entries(o.policy)) {
      if ((ch !== 'voice' && ch !== 'text') || !POLICIES.has(String(p))) {
        return `${o.name}: policy.${ch} must be allow, ask or deny on voice or text`
      }
    }
  }
  return undefined
}
