import { accessSync, constants, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ConfigError } from '../config/errors.js'
import {
  CREDENTIALS,
  configPathOf,
  credentialsBeside,
  DEFAULT_CONFIG_PATH,
  type LoadedConfig,
  loadConfig,
} from '../config/load.js'
import { type Check, formatHuman, formatJson, runChecks } from '../doctor/check.js'
import { deviceChecks } from '../doctor/device-checks.js'
import type { DeviceDoctorContext } from '../doctor/device-context.js'
import { type GeminiDoctorContext, geminiChecks } from '../doctor/gemini-checks.js'
import { homeAssistantCheck } from '../doctor/home-assistant-check.js'
import { type OpenAIDoctorContext, openaiChecks } from '../doctor/openai-checks.js'
import { createLogger } from '../logger.js'

export const USAGE = `usage: nocturn doctor [--config path] [--json] [--connect] [--probe] [--provider gemini|openai] [--base-url URL] [--model ID]

Checks what a person would otherwise debug by hand, each with a plain-language fix: the
configuration, the audio PCMs, the panel's GPIO backend and pins, the broker and its credentials,
the paired phones, Home Assistant (URL, token, tools, critical entities), the Gemini key, the account's live models and which support asynchronous calls.

  --config path   the configuration (default: $NOCTURN_CONFIG, else ${DEFAULT_CONFIG_PATH} if it
                  exists; without one the Gemini settings come from the environment)
  --json          the report as JSON, for programs
  --connect       also open a short live session to the model
  --probe         open one short session whose test tool blocks, to see whether the model keeps
                  talking (asynchronous) or waits (sequential), beside the capability table's
                  claim; costs a few seconds of a session on the account
  --provider KIND the provider to check without a configuration (default gemini; OpenAI's key
                  from OPENAI_API_KEY or OPENAI_API_KEY_FILE)
  --base-url URL  the Gemini endpoint (overrides provider.baseUrl)
  --model ID      the live model (overrides provider.model; implies --connect)

Exit code 1 when any check fails, 0 otherwise (warnings allowed). Never prints a secret.
`

type DoctorContext = DeviceDoctorContext & GeminiDoctorContext & OpenAIDoctorContext

/**
 * `nocturn doctor` (docs/design.md §7). Reads the config when there is one (the model, base URL and
 * key from it), then runs every check; one failing never stops the others.
 */
export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      json: { type: 'boolean', default: false },
      config: { type: 'string' },
      connect: { type: 'boolean', default: false },
      'base-url': { type: 'string' },
      model: { type: 'string' },
      provider: { type: 'string' },
      probe: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    process.stdout.write(USAGE)
    return 0
  }
  // Log lines go to stderr: stdout is the report (and must stay parseable with --json).
  const logger = createLogger({
    level: process.env.NOCTURN_LOG_LEVEL ?? 'error',
    destination: process.stderr,
  })

  const env = process.env
  const configPath = configPathOf(values.config, env)
  let loaded: LoadedConfig | undefined
  let configError: ConfigError | undefined
  if (configPath !== undefined) {
    try {
      loaded = loadConfig({ path: configPath, env })
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err
      configError = err
    }
  }

  const provider = loaded?.config.provider
  const kind = provider?.kind ?? (values.provider === 'openai' ? 'openai' : 'gemini')
  const ctx: DoctorContext = {
    env,
    loaded,
    configPath,
    configError,
    baseUrl:
      values['base-url'] ??
      provider?.baseUrl ??
      (kind === 'openai' ? env.NOCTURN_OPENAI_BASE_URL : env.NOCTURN_GEMINI_BASE_URL),
    model:
      values.model ??
      provider?.model ??
      (kind === 'openai' ? env.NOCTURN_OPENAI_MODEL : env.NOCTURN_GEMINI_MODEL),
    connect: values.connect === true || values.model !== undefined,
    probe: values.probe === true,
    logger,
    openaiKey: provider?.apiKey
      ? { key: provider.apiKey, source: loaded?.secretSources.apiKey ?? 'config' }
      : openaiKeyFromEnv(env),
  }
  if (loaded) {
    // The configuration resolved the key already (environment, credential or file): use that.
    ctx.key = provider?.apiKey
      ? { key: provider.apiKey, source: loaded.secretSources.apiKey }
      : keyNotSet(configPath)
  }

  if (values.probe) {
    // It uses the household's account: say so before it runs.
    process.stderr.write(
      'doctor --probe: opening one short session with the live model (a few seconds, billed to the account) to see whether its calls block\n',
    )
  }
  const checks: Check<DoctorContext>[] = [
    ...deviceChecks,
    homeAssistantCheck,
    ...(kind === 'openai' ? openaiChecks : geminiChecks),
  ]
  const results = await runChecks(checks, ctx)
  process.stdout.write(values.json ? formatJson(results) : formatHuman(results))
  return results.some((r) => r.status === 'fail') ? 1 : 0
}

/**
 * Why the key is not set, and where to put it. The installer's credentials folder is root's: a
 * doctor run as the service's user cannot see inside it, though the service is handed the key.
 */
function keyNotSet(configPath: string | undefined): Error {
  const dir = configPath === undefined ? undefined : credentialsBeside(configPath)
  if (dir && existsSync(dir)) {
    try {
      accessSync(dir, constants.R_OK | constants.X_OK)
    } catch {
      return new Error(
        `cannot look in ${dir} as this user (it is root's; the service is handed the key by systemd): run doctor as root, sudo nocturn doctor`,
      )
    }
    return new Error(
      `not set: put it in ${join(dir, CREDENTIALS.apiKey)} (the service reads it by LoadCredential=), or set provider.apiKeyFile or GEMINI_API_KEY`,
    )
  }
  return new Error(
    'not set: put it in the gemini-api-key credential (LoadCredential=), provider.apiKeyFile, or GEMINI_API_KEY',
  )
}

/** OpenAI's key without a configuration: `OPENAI_API_KEY`, or the first line of `OPENAI_API_KEY_FILE`. */
function openaiKeyFromEnv(env: NodeJS.ProcessEnv): { key: string; source: string } | Error {
  const direct = env.OPENAI_API_KEY?.trim()
  if (direct) return { key: direct, source: 'OPENAI_API_KEY' }
  const file = env.OPENAI_API_KEY_FILE?.trim()
  if (!file) return new Error('not set: export OPENAI_API_KEY or OPENAI_API_KEY_FILE')
  try {
    const key = readFileSync(file, 'utf8').split('\n')[0]?.trim()
    if (key) return { key, source: `OPENAI_API_KEY_FILE (${file})` }
    return new Error(`OPENAI_API_KEY_FILE names ${file}, which is empty`)
  } catch (err) {
    return new Error(
      `OPENAI_API_KEY_FILE names ${file}, which cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    )
  }
}
