import { accessSync, constants, existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ConfigError } from '../config/errors.js'
import {
  configPathOf,
  credentialsBeside,
  DEFAULT_CONFIG_PATH,
  type LoadedConfig,
  loadConfig,
  PROVIDER_KEYS,
} from '../config/load.js'
import { type ProviderKind, providerPlace } from '../config/schema.js'
import { formatHuman, formatJson, runChecks } from '../doctor/check.js'
import { deviceChecks } from '../doctor/device-checks.js'
import type { DeviceDoctorContext } from '../doctor/device-context.js'
import { geminiChecks } from '../doctor/gemini-checks.js'
import { homeAssistantCheck } from '../doctor/home-assistant-check.js'
import { openaiChecks } from '../doctor/openai-checks.js'
import { createLogger } from '../logger.js'

export const USAGE = `usage: nocturn doctor [--config path] [--json] [--connect] [--probe] [--provider gemini|openai] [--base-url URL] [--model ID]

Checks what a person would otherwise debug by hand, each with a plain-language fix: the
configuration, the audio PCMs, the panel's GPIO backend and pins, the broker and its credentials,
the paired phones, Home Assistant (URL, token, tools, critical entities), and for each configured
provider in order (provider[0], provider[1], ... when there are several): its key, the account's
live models and which support asynchronous calls, the configured model.

  --config path   the configuration (default: $NOCTURN_CONFIG, else ${DEFAULT_CONFIG_PATH} if it
                  exists; without one the Gemini settings come from the environment)
  --json          the report as JSON, for programs
  --connect       also open a short live session to the model
  --probe         for each provider, open one short session whose test tool blocks, to see
                  whether the model keeps talking (asynchronous) or waits (sequential), beside
                  the capability table's claim; costs a few seconds of a session on the account
  --provider KIND the provider to check without a configuration (default gemini; OpenAI's key
                  from OPENAI_API_KEY or OPENAI_API_KEY_FILE)
  --base-url URL  the provider's endpoint (overrides the first provider's baseUrl)
  --model ID      the live model (overrides the first provider's model; implies --connect)

Exit code 1 when any check fails, 0 otherwise (warnings allowed). Never prints a secret.
`

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

  const base = { env, loaded, configPath, configError, logger }
  const targets = providerTargets(loaded, env, {
    kind: values.provider === 'openai' ? 'openai' : 'gemini',
    baseUrl: values['base-url'],
    model: values.model,
  })
  if (values.probe) {
    // It uses the household's account: say so before it runs.
    const which =
      targets.length === 1
        ? 'with the live model (a few seconds'
        : `with each of the ${targets.length} configured providers' live models in turn (${targets.map((t) => `${t.place} ${t.kind}`).join(', ')}; a few seconds each`
    process.stderr.write(
      `doctor --probe: opening one short session ${which}, billed to the account) to see whether its calls block\n`,
    )
  }
  const results = await runChecks<DeviceDoctorContext>([...deviceChecks, homeAssistantCheck], base)
  for (const t of targets) {
    const ctx = {
      ...base,
      baseUrl: t.baseUrl,
      model: t.model,
      connect: values.connect === true || values.model !== undefined,
      probe: values.probe === true,
    }
    const checked =
      t.kind === 'openai'
        ? await runChecks(openaiChecks, { ...ctx, openaiKey: t.key ?? openaiKeyFromEnv(env) })
        : await runChecks(geminiChecks, { ...ctx, ...(t.key && { key: t.key }) })
    // With several providers, each line says which entry of the list it is about.
    results.push(
      ...(targets.length === 1
        ? checked
        : checked.map((r) => ({ ...r, name: `${t.place} ${r.name}` }))),
    )
  }
  process.stdout.write(values.json ? formatJson(results) : formatHuman(results))
  return results.some((r) => r.status === 'fail') ? 1 : 0
}

/** One provider doctor checks: its place in the configured list, and what to reach it with. */
interface ProviderTarget {
  readonly place: string
  readonly kind: ProviderKind
  readonly baseUrl: string | undefined
  readonly model: string | undefined
  /** The key as the configuration resolved it; undefined: look in the environment. */
  readonly key: { key: string; source: string } | Error | undefined
}

/**
 * Every configured provider in order (`--base-url` and `--model` override the first, which is
 * `config.provider`); without a configuration, the one `--provider` names, from the environment.
 */
function providerTargets(
  loaded: LoadedConfig | undefined,
  env: NodeJS.ProcessEnv,
  flags: { kind: ProviderKind; baseUrl: string | undefined; model: string | undefined },
): ProviderTarget[] {
  if (!loaded) {
    const openai = flags.kind === 'openai'
    return [
      {
        place: 'provider',
        kind: flags.kind,
        baseUrl:
          flags.baseUrl ?? (openai ? env.NOCTURN_OPENAI_BASE_URL : env.NOCTURN_GEMINI_BASE_URL),
        model: flags.model ?? (openai ? env.NOCTURN_OPENAI_MODEL : env.NOCTURN_GEMINI_MODEL),
        key: undefined,
      },
    ]
  }
  const { config } = loaded
  return config.providers.map((p, i) => {
    const place = providerPlace(config, i)
    return {
      place,
      kind: p.kind,
      baseUrl: (i === 0 ? flags.baseUrl : undefined) ?? p.baseUrl,
      model: (i === 0 ? flags.model : undefined) ?? p.model,
      // The configuration resolved the key already (environment, credential or file): use that.
      key: p.apiKey
        ? { key: p.apiKey, source: loaded.keySources[i] ?? 'config' }
        : keyNotSet(loaded.path, p.kind, place),
    }
  })
}

/**
 * Why the key is not set, and where to put it. The installer's credentials folder is root's: a
 * doctor run as the service's user cannot see inside it, though the service is handed the key.
 */
function keyNotSet(configPath: string, kind: ProviderKind, place: string): Error {
  const { envName, credential } = PROVIDER_KEYS[kind]
  const dir = credentialsBeside(configPath)
  if (existsSync(dir)) {
    try {
      accessSync(dir, constants.R_OK | constants.X_OK)
    } catch {
      return new Error(
        `cannot look in ${dir} as this user (it is root's; the service is handed the key by systemd): run doctor as root, sudo nocturn doctor`,
      )
    }
    return new Error(
      `not set: put it in ${join(dir, credential)} (the service reads it by LoadCredential=), or set ${place}.apiKeyFile or ${envName}`,
    )
  }
  return new Error(
    `not set: put it in the ${credential} credential (LoadCredential=), ${place}.apiKeyFile, or ${envName}`,
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
