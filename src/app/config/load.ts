import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { errorText } from '../../core/errors.js'
import type { PolicyTable } from '../../core/policy.js'
import { type LineName, PRESETS } from '../../panel/presets.js'
import { ConfigError, describeIssues } from './errors.js'
import { lineColumn, stripJsonComments } from './jsonc.js'
import { mcpTokenEnv } from './mcp-servers-schema.js'
import {
  asWritten,
  type Config,
  configSchema,
  type PanelConfig,
  type ProviderKind,
  providerPlace,
  type RgbLedsConfig,
  rgbLedsSchema,
  withProviders,
} from './schema.js'

export const DEFAULT_CONFIG_PATH = '/etc/nocturn/config.json'

/** The systemd credential names (LoadCredential=<name>:<file> in systemd/nocturn.service). */
export const CREDENTIALS = {
  apiKey: 'gemini-api-key',
  mqttPassword: 'mqtt-password',
  haToken: 'ha-token',
} as const

/** Where each provider's key is looked for: its environment variable and its systemd credential. */
export const PROVIDER_KEYS: Record<ProviderKind, { envName: string; credential: string }> = {
  gemini: { envName: 'GEMINI_API_KEY', credential: CREDENTIALS.apiKey },
  openai: { envName: 'OPENAI_API_KEY', credential: 'openai-api-key' },
}

/**
 * Where a command run by hand finds the credentials: the folder `credentials` beside its config
 * file, as the installer lays them out (/etc/nocturn/credentials, the files the unit's
 * LoadCredential= lines name). The service itself is handed them in $CREDENTIALS_DIRECTORY.
 */
export function credentialsBeside(configPath: string): string {
  return join(dirname(configPath), 'credentials')
}

/** The panel with the preset applied: explicit pins win over the preset's. */
export interface ResolvedPanel {
  readonly backend: PanelConfig['backend']
  readonly button?: LineName
  readonly led?: LineName
  readonly buttonActiveLow: boolean
  readonly ledActiveLow: boolean
  readonly debounceMs: number
  readonly longPressMs: number
  /** APA102 colour LEDs on SPI, from the config or the preset. */
  readonly rgbLeds?: RgbLedsConfig
}

type SecretSource =
  | 'environment'
  | 'environment file'
  | 'credential'
  | 'config'
  | 'config file'
  | 'none'

export interface LoadedConfig {
  readonly path: string
  readonly config: Config
  readonly panel: ResolvedPanel
  readonly policies: PolicyTable
  /** Where each secret came from, for `doctor` (never the value). */
  readonly secretSources: { readonly apiKey: SecretSource; readonly mqttPassword: SecretSource }
  /** Where each configured provider's key came from, in the order of `config.providers`. */
  readonly keySources: readonly SecretSource[]
}

export interface LoadOptions {
  readonly path?: string
  readonly env?: NodeJS.ProcessEnv
  /**
   * false: read no secret at all (no environment, credential or key file) and leave every secret
   * unset, sources "none" — for commands that need none, like `pair` and `transcripts`, so an
   * unreadable key file does not stop them and no secret is held for nothing. Default true.
   */
  readonly secrets?: boolean
}

/**
 * The configuration file a command reads: its `--config`, else `$NOCTURN_CONFIG`, else
 * DEFAULT_CONFIG_PATH when that exists. Undefined when there is none (a development checkout):
 * the command then uses its development defaults.
 */
export function configPathOf(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return (
    flag ??
    (env.NOCTURN_CONFIG || (existsSync(DEFAULT_CONFIG_PATH) ? DEFAULT_CONFIG_PATH : undefined))
  )
}

/**
 * Reads, validates and completes the configuration: the file (comments allowed), then secrets from
 * the environment (`GEMINI_API_KEY`, `NOCTURN_MQTT_PASSWORD`, each also as `…_FILE`), from systemd
 * credentials (`$CREDENTIALS_DIRECTORY/gemini-api-key`, `…/mqtt-password`, see LoadCredential=) or
 * from key files named in the config. The environment wins over credentials, credentials over the
 * file, so a secret never has to be written into config.json. Throws ConfigError.
 */
export function loadConfig(opts: LoadOptions = {}): LoadedConfig {
  const env = opts.env ?? process.env
  const path = opts.path ?? env.NOCTURN_CONFIG ?? DEFAULT_CONFIG_PATH
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') {
      throw new ConfigError([
        `config: ${path} does not exist — create it with "nocturn config --example > ${path}" and edit it, or pass --config <path>`,
      ])
    }
    throw new ConfigError([
      `config: cannot read ${path} (${code ?? 'error'}) — check that the nocturn user may read it`,
    ])
  }
  return parseConfig(text, path, env, {
    secrets: opts.secrets ?? true,
    credentialsDir: credentialsBeside(path),
  })
}

/** The same as `loadConfig` for text already read. */
export function parseConfig(
  text: string,
  path: string,
  env: NodeJS.ProcessEnv = {},
  opts: {
    readonly secrets?: boolean
    /** Read when $CREDENTIALS_DIRECTORY is unset: the file's own (`credentialsBeside`). */
    readonly credentialsDir?: string
  } = {},
): LoadedConfig {
  const stripped = stripJsonComments(text)
  let raw: unknown
  try {
    raw = stripped.trim() === '' ? {} : JSON.parse(stripped)
  } catch (err) {
    // JSON.parse quotes the text near the error, which may be a secret: report the place only.
    const pos = /position (\d+)/.exec(errorText(err))
    const where = pos
      ? (({ line, column }) => ` at line ${line}, column ${column}`)(
          lineColumn(stripped, Number(pos[1])),
        )
      : ''
    throw new ConfigError([
      `config: ${path} is not valid JSON${where} — check for a missing comma, quote or brace there`,
    ])
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError([`config: ${path} must hold one JSON object ({ … })`])
  }
  const parsed = configSchema.safeParse(raw)
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ ...i, path: asWritten(i.path, raw) }))
    throw new ConfigError(describeIssues(issues, raw))
  }
  const config = withProviders(parsed.data)
  const problems: string[] = []
  // Without secrets every one stays unset, even one written in the file itself.
  const resolve: typeof resolveSecret =
    opts.secrets === false ? () => ({ value: undefined, source: 'none' }) : resolveSecret

  // Outside the unit (`sudo nocturn doctor`), the files the unit would have handed over.
  const credentialsDir = env.CREDENTIALS_DIRECTORY || opts.credentialsDir
  // Each provider its own key, found where that kind's key is looked for.
  const keySources = config.providers.map((provider, i) => {
    const key = resolve({
      env,
      credentialsDir,
      ...PROVIDER_KEYS[provider.kind],
      value: provider.apiKey,
      file: provider.apiKeyFile,
      fileKey: `${providerPlace(config, i)}.apiKeyFile`,
      problems,
    })
    provider.apiKey = key.value
    return key.source
  })
  let mqttPassword: SecretSource = 'none'
  if (config.mqtt) {
    if (env.NOCTURN_MQTT_USERNAME) config.mqtt.username = env.NOCTURN_MQTT_USERNAME
    const pw = resolve({
      env,
      credentialsDir,
      envName: 'NOCTURN_MQTT_PASSWORD',
      credential: CREDENTIALS.mqttPassword,
      value: config.mqtt.password,
      file: config.mqtt.passwordFile,
      fileKey: 'mqtt.passwordFile',
      problems,
    })
    config.mqtt.password = pw.value
    mqttPassword = pw.source
    if (config.mqtt.password && !config.mqtt.username) {
      problems.push('mqtt.username: required when a password is set — add the broker user name')
    }
    if ((config.mqtt.cert === undefined) !== (config.mqtt.key === undefined)) {
      problems.push('mqtt.cert / mqtt.key: a client certificate needs both — set both or neither')
    }
  }
  const ntfy = config.alerts.ntfy
  if (ntfy) {
    ntfy.token = resolve({
      env,
      credentialsDir,
      envName: 'NOCTURN_NTFY_TOKEN',
      // Read from $CREDENTIALS_DIRECTORY when the household adds its own LoadCredential line.
      credential: 'ntfy-token',
      value: ntfy.token,
      file: ntfy.tokenFile,
      fileKey: 'alerts.ntfy.tokenFile',
      problems,
    }).value
  }
  for (const server of config.mcpServers) {
    server.token = resolve({
      env,
      credentialsDir,
      envName: mcpTokenEnv(server.name),
      credential: `mcp-${server.name}-token`,
      value: undefined,
      file: server.tokenFile,
      fileKey: 'mcpServers[].tokenFile',
      problems,
    }).value
  }
  const ha = config.homeAssistant
  if (ha) {
    const token = resolve({
      env,
      credentialsDir,
      envName: 'NOCTURN_HA_TOKEN',
      credential: CREDENTIALS.haToken,
      value: undefined,
      file: ha.tokenFile,
      fileKey: 'homeAssistant.tokenFile',
      problems,
    })
    ha.token = token.value
    if (opts.secrets !== false && token.value === undefined) {
      problems.push(
        'homeAssistant: no access token — set NOCTURN_HA_TOKEN, the credential "ha-token" or homeAssistant.tokenFile (a long-lived token of a dedicated HA user)',
      )
    }
  }
  if (problems.length > 0) throw new ConfigError(problems)

  return {
    path,
    config,
    panel: resolvePanel(config.panel),
    policies: policyTable(config),
    secretSources: { apiKey: keySources[0] ?? 'none', mqttPassword },
    keySources,
  }
}

export function resolvePanel(p: PanelConfig): ResolvedPanel {
  const preset = p.preset === 'custom' ? undefined : PRESETS[p.preset]
  const button = (p.button ?? preset?.button) as LineName | undefined
  const led = (p.led ?? preset?.led) as LineName | undefined
  const rgbLeds =
    p.rgbLeds === false
      ? undefined
      : (p.rgbLeds ?? (preset?.rgbLeds ? rgbLedsSchema.parse(preset.rgbLeds) : undefined))
  return {
    backend: p.backend,
    ...(button ? { button } : {}),
    ...(led ? { led } : {}),
    buttonActiveLow: p.buttonActiveLow ?? preset?.buttonActiveLow ?? true,
    ledActiveLow: p.ledActiveLow ?? preset?.ledActiveLow ?? false,
    debounceMs: p.debounceMs,
    longPressMs: p.longPressMs,
    ...(rgbLeds ? { rgbLeds } : {}),
  }
}

/** Configured tool policies plus each home action's own (the tools table wins). */
function policyTable(config: Config): PolicyTable {
  const table: Record<string, PolicyTable[string]> = {}
  for (const a of config.homeActions) if (a.policy) table[a.name] = a.policy
  return { ...table, ...config.tools.policies }
}

function resolveSecret(options: {
  env: NodeJS.ProcessEnv
  credentialsDir: string | undefined
  envName: string
  credential: string
  value: string | undefined
  file: string | undefined
  fileKey: string
  problems: string[]
}): { value: string | undefined; source: SecretSource } {
  const direct = options.env[options.envName]
  if (direct) return { value: direct, source: 'environment' }
  const envFile = options.env[`${options.envName}_FILE`]
  if (envFile) {
    return {
      value: readSecret(envFile, `${options.envName}_FILE`, options.problems),
      source: 'environment file',
    }
  }
  if (options.credentialsDir) {
    const v = tryRead(join(options.credentialsDir, options.credential))
    if (v !== undefined) return { value: v, source: 'credential' }
  }
  if (options.value) return { value: options.value, source: 'config' }
  if (options.file)
    return {
      value: readSecret(options.file, options.fileKey, options.problems),
      source: 'config file',
    }
  return { value: undefined, source: 'none' }
}

function readSecret(path: string, key: string, problems: string[]): string | undefined {
  try {
    const v = readFileSync(path, 'utf8').trim()
    if (v === '') problems.push(`${key}: ${path} is empty — put the secret in it`)
    return v || undefined
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error'
    problems.push(
      `${key}: cannot read ${path} (${code}) — check the path and that the nocturn user may read it`,
    )
    return undefined
  }
}

function tryRead(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}
