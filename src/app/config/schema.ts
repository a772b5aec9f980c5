import { z } from 'zod'
import { DEFAULT_WAKE_PRE_ROLL_MS } from '../../audio/wake-onset.js'
import {
  DEFAULT_APPROVAL_TIMEOUT_MS,
  DEFAULT_ECHO_TAIL_MS,
  DEFAULT_IDLE_MS,
  DEFAULT_SESSION_BUDGET_MS,
} from '../../core/defaults.js'
import { HEADER_LINE } from '../../panel/presets.js'
import {
  DEFAULT_CONFIRM_PHRASES,
  DEFAULT_CONFIRM_WITHIN_MS,
} from '../../voice/wake-confirmation.js'
import { alertsSchema } from './alerts-schema.js'
import { homeAssistantSchema } from './home-assistant-schema.js'
import { mcpServerSchema, mcpTokenEnv } from './mcp-servers-schema.js'
import { wakeSchema } from './wake-schema.js'

/**
 * The configuration file's shape: one JSON object (comments allowed), strict everywhere so a typo
 * is an error that names the key, never a setting silently ignored. Defaults are the appliance's.
 */

const seconds = (max: number) => z.number().positive().max(max)
const policy = z.enum(['allow', 'ask', 'deny'])
const channelPolicies = z.strictObject({ voice: policy.optional(), text: policy.optional() })
const line = z
  .string()
  .regex(HEADER_LINE, 'not a header line: use GPIO0…GPIO27 by name, e.g. "GPIO17"')
// ALSA PCM names as in /etc/asound.conf or `plughw:CARD=seeed2micvoicec,DEV=0`.
const pcm = z
  .string()
  .min(1)
  .regex(/^[A-Za-z0-9_:=,.-]+$/, 'not an ALSA PCM name (e.g. "voice_in" or "plughw:CARD=x,DEV=0")')
const absPath = z.string().min(1)

/** Where a provider's key and endpoint come from: the same fields whatever its kind. */
const providerAccess = {
  apiKey: z.string().min(1).optional(),
  apiKeyFile: absPath.optional(),
  baseUrl: z.url().optional(),
}

const geminiSchema = z.strictObject({
  kind: z.literal('gemini'),
  /** The live (speech-to-speech) model; 3.8 Live is stable and calls tools asynchronously. */
  model: z.string().min(1).default('gemini-3.8-live'),
  /** The typed-chat model. */
  textModel: z.string().min(1).default('gemini-2.5-flash'),
  /** The text-to-speech model announcements are said with (docs/home-assistant.md). */
  speechModel: z.string().min(1).default('gemini-3.8-flash-lite-tts'),
  ...providerAccess,
})

const openaiSchema = z.strictObject({
  kind: z.literal('openai'),
  /** The realtime (speech-to-speech) model; gpt-realtime calls tools asynchronously (docs/openai.md). */
  model: z.string().min(1).default('gpt-realtime'),
  /** The typed-chat model (chat completions). */
  textModel: z.string().min(1).default('gpt-4.1-mini'),
  /** The text-to-speech model announcements are said with. */
  speechModel: z.string().min(1).default('gpt-4o-mini-tts'),
  /** What transcribes the room: the transcript and the wake's second opinion. */
  transcriptionModel: z.string().min(1).default('gpt-4o-mini-transcribe'),
  /** The voice, unless the persona names one of OpenAI's. */
  voice: z.string().min(1).default('marin'),
  ...providerAccess,
})

/**
 * `kind` picks the provider's adapter (app/compose/provider-registry.ts); a provider without one is
 * Gemini, as every config was before there were kinds.
 */
const providerSchema = z.preprocess(
  (v) => (v !== null && typeof v === 'object' && !('kind' in v) ? { ...v, kind: 'gemini' } : v),
  z.discriminatedUnion('kind', [geminiSchema, openaiSchema]),
)

/**
 * `provider`: one provider, or a list in order of preference (failover, docs/voice-driver.md): each
 * entry its own kind, models and key. One object stays valid, as every config was before lists.
 */
const providersSchema = z.preprocess(
  (v) => (Array.isArray(v) ? v : [v === undefined ? {} : v]),
  z.array(providerSchema).min(1),
)

const audioSchema = z.strictObject({
  backend: z.enum(['alsa', 'portaudio', 'wav']).default('alsa'),
  capturePcm: pcm.default('default'),
  playbackPcm: pcm.default('default'),
  /** gate: the microphone sends silence while the speaker plays; aec: the capture PCM is echo-cancelled. */
  echo: z.enum(['gate', 'aec']).default('gate'),
  /** How long the gate stays closed after playback ends. */
  tailMs: z.number().int().min(0).max(5000).default(DEFAULT_ECHO_TAIL_MS),
  /** For backend "wav": the microphone file and the speaker file. */
  inputWav: absPath.optional(),
  outputWav: absPath.optional(),
})

/** The second opinion on a local wake: the model's own transcription must hear the phrase. */
const confirmSchema = z.strictObject({
  enabled: z.boolean().default(true),
  /** Any one heard in the model's input transcription confirms (case and punctuation ignored). */
  phrases: z
    .array(z.string().min(1))
    .min(1)
    .default([...DEFAULT_CONFIRM_PHRASES]),
  /** From the session's first connection: no phrase by then, and it closes without a word. */
  withinMs: z.number().int().min(300).max(10_000).default(DEFAULT_CONFIRM_WITHIN_MS),
})

/**
 * The local second opinion on a wake (docs/wake-word.md, "The local second opinion"): Debian's
 * pocketsphinx spots the phrase in the pre-roll before any audio leaves.
 */
const localCheckSchema = z.strictObject({
  /**
   * `auto` (the default): it runs beside each wake, holding nothing, until it has agreed with the
   * model on this household's confirmed wakes enough times in a row; only then does it hold the
   * audio. `true`: it always holds the audio; `false`: it never runs.
   */
  enabled: z.union([z.boolean(), z.literal('auto')]).default('auto'),
  /**
   * pocketsphinx's keyphrase threshold for the phrase: smaller lets more through. Unset: 1e-30
   * weighed against its competitors, 1e-12 alone (bench/RESULTS.md).
   */
  threshold: z.number().gt(0).lt(1).optional(),
  /**
   * Weigh the phrase against the names it is confused with ("hey charvis", "hey jars", made from
   * its phones): it agrees only where none of them beats it over the same stretch.
   */
  competitors: z.boolean().default(false),
  /** How much audio after the detection the check hears too (held meanwhile), in ms. */
  afterMs: z.number().int().min(0).max(1000).default(0),
  /** Holds `en-us/` and `cmudict-en-us.dict`; unset: Debian's pocketsphinx-en-us. */
  modelDir: absPath.optional(),
})

/** What the speaker listens for before anything leaves the room (docs/wake-word.md). */
const listenSchema = z.strictObject({
  /** The on-device wake word; unset: none. */
  wake: wakeSchema.optional(),
  /**
   * What opens a session: `wake` (the wake phrase; the default once a wake model is configured),
   * `button` (press to talk) or `speech` (any speech near the speaker, streamed once it starts).
   */
  mode: z.enum(['wake', 'button', 'speech']).optional(),
  confirm: confirmSchema.default(confirmSchema.parse({})),
  localCheck: localCheckSchema.default(localCheckSchema.parse({})),
  /** Audio from before the wake sent first: the phrase itself and a command said in one breath. */
  preRollMs: z.number().int().min(500).max(3000).default(DEFAULT_WAKE_PRE_ROLL_MS),
})

export const rgbLedsSchema = z.strictObject({
  device: absPath.default('/dev/spidev0.1'),
  count: z.number().int().min(1).max(64).default(3),
  /** The APA102's global brightness, 0–31: 8 is plain in daylight and no lamp at night. */
  brightness: z.number().int().min(0).max(31).default(8),
  speedHz: z.number().int().min(100_000).max(20_000_000).default(4_000_000),
})

export const panelSchema = z.strictObject({
  backend: z.enum(['gpiod', 'rpi-gpio', 'terminal', 'none']).default('none'),
  preset: z.enum(['respeaker-2mic', 'aiy-voice-hat', 'custom']).default('custom'),
  button: line.optional(),
  led: line.optional(),
  buttonActiveLow: z.boolean().optional(),
  ledActiveLow: z.boolean().optional(),
  debounceMs: z.number().int().min(0).max(500).default(30),
  longPressMs: z.number().int().min(200).max(10_000).default(800),
  /**
   * APA102 colour LEDs on SPI (the ReSpeaker 2-Mic HAT's three, which its preset turns on); false:
   * none, even where the preset has them. They show the LED's states in colour (docs in hardware/).
   */
  rgbLeds: z.union([z.literal(false), rgbLedsSchema]).optional(),
})

const mqttSchema = z.strictObject({
  url: z
    .string()
    .regex(/^(mqtts?|wss?):\/\/[^\s]+$/, 'expected mqtt://, mqtts://, ws:// or wss:// and a host'),
  username: z.string().min(1).optional(),
  password: z.string().min(1).optional(),
  passwordFile: absPath.optional(),
  /** TLS: the CA that signed the broker's certificate, and a client certificate and key if required. */
  ca: absPath.optional(),
  cert: absPath.optional(),
  key: absPath.optional(),
  prefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, 'letters, digits, _ - and / only, no wildcards')
    .default('nocturn/v1'),
  deviceId: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'lower-case letters, digits and - only, e.g. "kitchen"')
    .default('speaker'),
  /**
   * May the phone that typed a request approve it itself? "non-critical" (default): yes, except
   * for critical tools, which need another phone's look; "never"; or "any".
   */
  selfApproval: z.enum(['non-critical', 'never', 'any']).default('non-critical'),
  /**
   * The owner's yes for a critical tool (docs/protocol.md, "The owner's yes"): "if-registered"
   * (default) needs the fingerprint, face or screen lock of every phone that registered a
   * credential, and takes a plain yes from a phone that has none; "always" needs it from every
   * phone, so a phone without one may deny anything and approve only ordinary tools.
   */
  ownerCheck: z.enum(['if-registered', 'always']).default('if-registered'),
  /** The device in Home Assistant over this broker (docs/home-assistant.md); off by default. */
  homeAssistant: z
    .strictObject({
      /** true: discovered in Home Assistant; false: the discovery config is removed at start. */
      discovery: z.boolean().default(false),
      /** What Home Assistant calls the device; "Nocturn <deviceId>" by default. */
      name: z.string().min(1).max(64).optional(),
      /** Home Assistant's discovery prefix, if it was changed there. */
      discoveryPrefix: z
        .string()
        .regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, 'letters, digits, _ - and / only')
        .default('homeassistant'),
    })
    .optional(),
})

/** The household phone app, served by the device (docs/phone-app.md). */
const phoneAppSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    port: z.number().int().min(0).max(65535).default(8080),
    /** The address to listen on; every interface if unset. */
    host: z.string().min(1).optional(),
    /** HTTPS: both files (PEM) or neither. */
    tlsCertFile: absPath.optional(),
    tlsKeyFile: absPath.optional(),
    /**
     * The household CA's certificate, served at /household-ca.crt for phones to install (never its
     * key); `ca.crt` beside tlsCertFile if unset and there.
     */
    caCertFile: absPath.optional(),
    /** The name phones reach this device by, in pairing links; the host name + ".local" if unset. */
    publicHost: z
      .string()
      .regex(/^[A-Za-z0-9.-]{1,253}$/, 'a host name or IPv4 address, e.g. "kitchen.local"')
      .optional(),
    /** The broker's WebSocket URL the app uses; derived from mqtt.url (port 9001) if unset. */
    brokerWsUrl: z
      .string()
      .regex(/^wss?:\/\/[^\s]+$/, 'expected ws:// or wss:// and a host')
      .optional(),
    /** The built app's folder; dist/web of this installation if unset. */
    root: absPath.optional(),
  })
  .refine((p) => (p.tlsCertFile === undefined) === (p.tlsKeyFile === undefined), {
    message: 'tlsCertFile and tlsKeyFile go together: set both or neither',
  })

const sessionSchema = z.strictObject({
  /** Wall-clock budget of one spoken session (docs/design.md §2.9), in minutes. */
  budgetMinutes: z
    .number()
    .positive()
    .max(240)
    .default(DEFAULT_SESSION_BUDGET_MS / 60_000),
  idleTimeoutSeconds: seconds(3600).default(DEFAULT_IDLE_MS / 1000),
  approvalTimeoutSeconds: seconds(3600).default(DEFAULT_APPROVAL_TIMEOUT_MS / 1000),
})

const personaSchema = z.strictObject({
  instruction: z.string().min(1).optional(),
  voice: z.string().min(1).optional(),
  language: z
    .string()
    .regex(/^[a-z]{2,3}(-[A-Za-z0-9]+)*$/, 'a BCP-47 tag, e.g. "en-GB"')
    .optional(),
  timeZone: z.string().min(1).optional(),
})

const homeActionSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,62}$/, 'lower-case letters, digits and _, e.g. "unlock_front_door"'),
  /** What the model reads to decide when to use it. */
  description: z.string().min(1),
  /** One human sentence for the phone: "unlock the front door". */
  says: z.string().min(1).optional(),
  topic: z
    .string()
    .min(1)
    .refine((t) => !/[+#]/.test(t), 'a topic to publish to cannot contain the wildcards + or #'),
  payload: z.union([z.string(), z.record(z.string(), z.unknown())]),
  qos: z.union([z.literal(0), z.literal(1), z.literal(2)]).default(1),
  retain: z.boolean().default(false),
  critical: z.boolean().default(false),
  policy: channelPolicies.optional(),
})

const toolsSchema = z.strictObject({
  /** Per tool, per channel: allow, ask (a phone must say yes) or deny. */
  policies: z.record(z.string(), channelPolicies).default({}),
  /** Local modules, each exporting tools (see docs/tools.md). */
  modules: z.array(absPath).default([]),
})

/** An entry named as one before it in the list is an issue on its name, saying what the rule is. */
function twiceNamed(
  entries: readonly { readonly name: string }[],
  list: string,
  rule: string,
  ctx: z.RefinementCtx,
): void {
  const seen = new Set<string>()
  entries.forEach((e, i) => {
    if (seen.has(e.name)) {
      ctx.addIssue({
        code: 'custom',
        path: [list, i, 'name'],
        message: `"${e.name}" is used twice; ${rule}`,
      })
    }
    seen.add(e.name)
  })
}

export const configSchema = z
  .strictObject({
    provider: providersSchema,
    audio: audioSchema.default(audioSchema.parse({})),
    listen: listenSchema.default(listenSchema.parse({})),
    panel: panelSchema.default(panelSchema.parse({})),
    mqtt: mqttSchema.optional(),
    phoneApp: phoneAppSchema.default(phoneAppSchema.parse({})),
    phonesDir: absPath.default('/var/lib/nocturn/phones'),
    store: z.strictObject({ path: absPath }).default({ path: '/var/lib/nocturn/nocturn.db' }),
    session: sessionSchema.default(sessionSchema.parse({})),
    /** How long conversations are kept: by age, by count, or both; unset keeps them. */
    retention: z
      .strictObject({
        days: z.number().int().positive().optional(),
        keep: z.number().int().positive().optional(),
      })
      .default({}),
    persona: personaSchema.default({}),
    tools: toolsSchema.default(toolsSchema.parse({})),
    homeActions: z.array(homeActionSchema).default([]),
    homeAssistant: homeAssistantSchema.optional(),
    mcpServers: z.array(mcpServerSchema).default([]),
    alerts: alertsSchema.default(alertsSchema.parse({})),
    logLevel: z.enum(['trace', 'debug', 'info', 'warn', 'error']).default('info'),
  })
  .superRefine((c, ctx) => {
    twiceNamed(c.mcpServers, 'mcpServers', 'each server needs its own name', ctx)
    c.mcpServers.forEach((m, i) => {
      if (m.token !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['mcpServers', i, 'token'],
          message: `keep the token out of the config file: set ${mcpTokenEnv(m.name)}, the credential "mcp-${m.name}-token", or tokenFile`,
        })
      }
    })
    twiceNamed(c.homeActions, 'homeActions', 'names must be unique', ctx)
    c.homeActions.forEach((a, i) => {
      if (a.critical && a.policy && Object.values(a.policy).includes('allow')) {
        ctx.addIssue({
          code: 'custom',
          path: ['homeActions', i, 'policy'],
          message: 'a critical action cannot be "allow": use "ask" or "deny"',
        })
      }
    })
    if (c.panel.backend === 'gpiod' || c.panel.backend === 'rpi-gpio') {
      if (c.panel.preset === 'custom' && !c.panel.button && !c.panel.led) {
        ctx.addIssue({
          code: 'custom',
          path: ['panel'],
          message: `backend "${c.panel.backend}" needs a preset or at least one of button, led`,
        })
      }
    }
    if (c.listen.mode === 'wake' && !c.listen.wake) {
      ctx.addIssue({
        code: 'custom',
        path: ['listen', 'mode'],
        message:
          '"wake" needs a wake model: set listen.wake.models (nocturn wake install hey_jarvis), or choose "button" or "speech"',
      })
    }
    if (c.alerts.homeAssistant && !c.mqtt) {
      ctx.addIssue({
        code: 'custom',
        path: ['alerts', 'homeAssistant'],
        message: 'Home Assistant alerts go over the broker: configure mqtt, or set this to false',
      })
    }
    if (c.audio.backend === 'wav' && !c.audio.inputWav) {
      ctx.addIssue({
        code: 'custom',
        path: ['audio', 'inputWav'],
        message: 'required when audio.backend is "wav"',
      })
    }
  })

type ParsedConfig = z.infer<typeof configSchema>
export type ProviderConfig = ParsedConfig['provider'][number]

/**
 * The configuration as the appliance reads it: `providers` every configured provider in order of
 * preference, `provider` the first of them (the one `doctor` and the status name).
 */
export type Config = Omit<ParsedConfig, 'provider'> & {
  readonly provider: ProviderConfig
  readonly providers: readonly ProviderConfig[]
}

/** The parsed file as the appliance reads it (see `Config`). */
export function withProviders(parsed: ParsedConfig): Config {
  const [first] = parsed.provider
  if (!first) throw new Error('the schema lets no empty provider list through')
  return { ...parsed, provider: first, providers: parsed.provider }
}

/** How a message names the i-th provider: `provider` when there is one, else `provider[i]`. */
export function providerPlace(config: Pick<Config, 'providers'>, i: number): string {
  return config.providers.length === 1 ? 'provider' : `provider[${i}]`
}

/**
 * A zod issue's path as the household wrote the file: a single provider object is checked as a
 * one-entry list, and its problems are named `provider.model`, not `provider[0].model`.
 */
export function asWritten(path: readonly PropertyKey[], raw: unknown): PropertyKey[] {
  const single =
    raw !== null &&
    typeof raw === 'object' &&
    !Array.isArray((raw as { provider?: unknown }).provider)
  return single && path[0] === 'provider' && path[1] === 0
    ? ['provider', ...path.slice(2)]
    : [...path]
}
export type ProviderKind = ProviderConfig['kind']
export type PanelConfig = z.infer<typeof panelSchema>
export type ListenConfig = z.infer<typeof listenSchema>

/** What opens a session: the wake word once a model is configured, else speech as before. */
export function listenMode(listen: ListenConfig): 'wake' | 'button' | 'speech' {
  return listen.mode ?? (listen.wake ? 'wake' : 'speech')
}

/** Keys whose values are secrets: never echoed in an error or a log. */
export const SECRET_KEYS = new Set(['apiKey', 'password', 'token'])
export type RgbLedsConfig = z.infer<typeof rgbLedsSchema>
