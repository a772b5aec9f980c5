import { parseArgs } from 'node:util'
import { formatHuman, formatJson, runChecks } from '../doctor/check.js'
import { type GeminiDoctorContext, geminiChecks } from '../doctor/gemini-checks.js'
import { createLogger } from '../logger.js'

/**
 * `nocturn doctor [--json] [--base-url URL] [--model ID]`: checks what a person would otherwise
 * debug by hand. For now: the Gemini key, the account's live models and which of them support
 * asynchronous calls, and a short connect to the configured model.
 */
export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      json: { type: 'boolean', default: false },
      'base-url': { type: 'string' },
      model: { type: 'string' },
    },
  })
  // Log lines go to stderr at warn: stdout is the report (and must stay parseable with --json).
  const logger = createLogger({
    level: process.env.NOCTURN_LOG_LEVEL ?? 'error',
    destination: process.stderr,
  })
  const ctx: GeminiDoctorContext = {
    env: process.env,
    baseUrl: values['base-url'] ?? process.env.NOCTURN_GEMINI_BASE_URL,
    model: values.model ?? process.env.NOCTURN_GEMINI_MODEL,
    logger,
  }
  const results = await runChecks(geminiChecks, ctx)
  process.stdout.write(values.json ? formatJson(results) : formatHuman(results))
  return results.some((r) => r.status === 'fail') ? 1 : 0
}
