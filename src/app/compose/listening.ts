import { MqttWakeArbiter } from '../../adapters/mqtt/wake-arbiter.js'
import {
  DEBIAN_MODEL_DIR,
  DEFAULT_MARGIN,
  DEFAULT_THRESHOLD,
  KeyphraseCheck,
  programMissing,
} from '../../adapters/pocketsphinx/keyphrase-check.js'
import { AnyOnset } from '../../audio/any-onset.js'
import { ButtonOnset } from '../../audio/button-onset.js'
import type { MicGate } from '../../audio/mic-gate.js'
import { MicRouter } from '../../audio/mic-router.js'
import type { MicReads } from '../../audio/read-cadence.js'
import { SpeechDetector } from '../../audio/speech-detector.js'
import { SpeechOnset } from '../../audio/speech-onset.js'
import { VoicedHistory } from '../../audio/voiced-history.js'
import { WakeOnset } from '../../audio/wake-onset.js'
import type { LiveConversations } from '../../conversations/live-conversations.js'
import { errorText } from '../../core/errors.js'
import type { DeviceState } from '../../device/device-state.js'
import { WakeCheckTrust } from '../../device/wake-check-trust.js'
import type { WakeLog } from '../../device/wake-log.js'
import type { PanelController } from '../../panel/panel-controller.js'
import type { AudioOut } from '../../ports/audio.js'
import type { OnsetSource } from '../../ports/onset.js'
import type { PhraseCheck } from '../../ports/phrase-check.js'
import type { SettingsStore } from '../../ports/settings-store.js'
import type { WakeArbiter } from '../../ports/wake-arbiter.js'
import type { WakeWordDetector } from '../../ports/wake-word.js'
import { EARCON_MS, earconPcm } from '../../tools/chime.js'
import { SessionLoop } from '../../voice/session-loop.js'
import type { SessionSummary } from '../../voice/session-types.js'
import type { VoiceDriver } from '../../voice/voice-driver.js'
import { listenMode } from '../config/schema.js'
import type { WakeConfig } from '../config/wake-schema.js'
import { followSensitivity, wakeModelPaths } from '../wake-detector.js'
import type { DeviceMqtt } from './broker.js'
import type { Composition } from './composition.js'
import type { WakeLoad } from './wake-load.js'

/*
 * The listening chain, in the order a microphone frame travels it:
 *   microphone (MicGate) → MicRouter → the onset source (listen.mode) → SessionLoop → VoiceDriver
 * The router gives the frames to the onset source while no session runs, and to the session while
 * one does. The wake stage is the exception: it hears the MicGate's room tap (after mute, before
 * the echo gate), whoever holds the route, so the wake phrase said over a reply is heard.
 */

/**
 * The microphone's router, its health (it hears nothing, it hears again) shown on the LED; with
 * `reads` (ALSA), the device read in bursts between sessions.
 */
export function routeMicrophone(
  { log }: Composition,
  mic: MicGate,
  device: DeviceState,
  reads?: MicReads,
): MicRouter {
  return new MicRouter(mic, {
    reads,
    onHealth: (h) => {
      if (!h.ok)
        log.warn(
          { event: 'microphone_hears_nothing', reason: h.reason },
          'microphone hears nothing',
        )
      else log.info({}, 'microphone hears again')
      device.fault('microphone', h.ok ? undefined : h.reason)
    },
  })
}

/**
 * With a broker and a wake model, several speakers in one home claim each wake on it and exactly
 * one answers (docs/protocol.md); with none, this speaker answers alone.
 */
export function wakeArbiter(
  { config: c, clock, log, closers }: Composition,
  mqtt: DeviceMqtt | undefined,
  device: DeviceState,
): WakeArbiter | undefined {
  if (!mqtt || !c.mqtt || listenMode(c.listen) !== 'wake') return undefined
  const arbiter = new MqttWakeArbiter({
    connection: mqtt.connection,
    deviceId: c.mqtt.deviceId,
    prefix: c.mqtt.prefix,
    logger: log.child({ component: 'wake-arbiter' }),
    clock,
    onRefused: (reason) => device.refused('wake_claims', reason),
  })
  closers.add(() => arbiter.close())
  return arbiter
}

interface ListeningDeps {
  readonly router: MicRouter
  readonly driver: VoiceDriver
  readonly live: LiveConversations
  /** The microphone behind the router: its room tap, its echo gate. */
  readonly mic: MicGate
  /** The speaker itself, for the earcon (not a drop of the model's audio). */
  readonly speaker: AudioOut
  readonly panel: PanelController
  readonly device: DeviceState
  /** Several speakers in one home: the claim of each wake. None: this speaker answers alone. */
  readonly arbiter?: WakeArbiter | undefined
  /** A wake the model's transcription did not confirm (the status counts it). */
  readonly onFalseWake?: (() => void) | undefined
  /** After each earcon is handed to the speaker, with its length. */
  readonly onEarcon?: ((ms: number) => void) | undefined
  readonly onSessionEnd?: ((summary: SessionSummary) => void) | undefined
  /** The wake log the household teaches the speaker with (wake mode). */
  readonly wakes?: WakeLog | undefined
  /** Where the local wake check's trust is remembered (listen.localCheck.enabled `auto`). */
  readonly settings: SettingsStore
  /** The microphone's reads (ALSA): aligned with the wake detector's chunks at each reset. */
  readonly reads?: MicReads | undefined
  /** Wake mode: the detector, loading since early in the start (wake-load.ts). */
  readonly wake?: WakeLoad | undefined
}

/** The stages that decide when a spoken session opens; started by the caller once all is ready. */
export async function composeListening(
  comp: Composition,
  deps: ListeningDeps,
): Promise<SessionLoop> {
  const { config: c, clock, log, closers } = comp
  const mode = listenMode(c.listen)
  const onset = await onsetFor(comp, mode, deps)
  closers.add(() => onset.close())
  const confirm = c.listen.confirm
  const local = mode === 'wake' ? localWakeCheck(comp, deps) : undefined
  const trust = local?.trust
  // Made when first needed: a speech-mode device never plays it.
  let earcon: Uint8Array | undefined
  return new SessionLoop({
    router: deps.router,
    onset,
    driver: deps.driver,
    live: deps.live,
    logger: log.child({ component: 'listen' }),
    clock,
    ...(mode === 'wake' &&
      (confirm.enabled || local) && {
        confirm: {
          phrases: confirm.enabled ? confirm.phrases : [],
          withinMs: confirm.withinMs,
          ...(local && { local: local.check, localAfterMs: c.listen.localCheck.afterMs }),
          ...(trust && { localGates: () => trust.gates }),
        },
      }),
    // The room hears it was heard; in speech mode a session opens on speech, as before, unannounced.
    ...(mode !== 'speech' && {
      heard: (onset) => {
        // Read before the session opens: a wake told while one runs talks over its reply.
        deps.wakes?.heard(onset, deps.driver.sessionRunning)
        trust?.heard(onset, deps.driver.sessionRunning)
        earcon ??= earconPcm(deps.speaker.sampleRateHz)
        deps.speaker.write(earcon)
        // The earcon is ours: the command said in the same breath is not gated for its length.
        deps.mic.hearNow(EARCON_MS + 50)
        deps.onEarcon?.(EARCON_MS)
      },
    }),
    ...(deps.onFalseWake && { onFalseWake: deps.onFalseWake }),
    onSessionEnd: (summary) => {
      deps.wakes?.ended(summary)
      trust?.ended(!summary.unconfirmed)
      deps.onSessionEnd?.(summary)
    },
  })
}

/**
 * The local second opinion (listen.localCheck), on the configured wake phrases, its verdicts told
 * to the wake log and, in `auto`, to its trust (which decides whether it holds the audio yet).
 * One that cannot be made (pocketsphinx missing, a phrase's word not in its dictionary) is, when
 * asked for with `true`, an error on the LED and the status with its message; in `auto` one info
 * line says why it is off. Either way the wake has the model's transcription as its second opinion.
 */
function localWakeCheck(
  { config: c, clock, log, closers }: Composition,
  deps: ListeningDeps,
): { check: PhraseCheck; trust: WakeCheckTrust | undefined } | undefined {
  const { enabled, threshold, competitors, modelDir, afterMs } = c.listen.localCheck
  if (!c.listen.wake) return undefined
  const off = (why: string) => {
    deps.device.setWakeCheck({ state: 'off', why })
    return undefined
  }
  if (enabled === false) return off('turned off (listen.localCheck.enabled: false)')
  if (enabled === 'auto' && !c.listen.confirm.enabled) {
    const why =
      'the model does not confirm wakes (listen.confirm off): there is nothing to earn trust from'
    log.info({ wakeCheck: 'off' }, `the local wake check is off: ${why}`)
    return off(why)
  }
  const phrases = wakeModelPaths(c.listen.wake as WakeConfig).phrases.map((p) => p.phrase)
  const keyThreshold =
    threshold ?? (competitors ? DEFAULT_THRESHOLD.weighed : DEFAULT_THRESHOLD.alone)
  let check: KeyphraseCheck
  try {
    const missing = programMissing()
    if (missing) throw new Error(missing)
    check = KeyphraseCheck.create({
      phrases,
      threshold: keyThreshold,
      ...(competitors && { competitors: { margin: DEFAULT_MARGIN } }),
      ...(modelDir && { modelDir }),
    })
  } catch (err) {
    if (enabled === 'auto') {
      log.info({ wakeCheck: 'off', reason: errorText(err) }, 'the local wake check is off')
      return off(errorText(err))
    }
    log.error({ event: 'wake_check_unavailable', err: errorText(err) }, 'no local wake check')
    deps.device.fault('wake check', errorText(err))
    return off(errorText(err))
  }
  closers.add(() => check.close())
  // Earned on these phrases and this check: a change of either starts it over in shadow.
  const key = JSON.stringify({
    phrases,
    threshold: keyThreshold,
    competitors,
    afterMs,
    modelDir: modelDir ?? DEBIAN_MODEL_DIR,
  })
  const trust =
    enabled === 'auto'
      ? new WakeCheckTrust({
          store: deps.settings,
          key,
          clock,
          logger: log.child({ component: 'wake-check' }),
          device: deps.device,
        })
      : undefined
  if (!trust) deps.device.setWakeCheck({ state: 'on' })
  deps.wakes?.onMissed(() => trust?.retried('a phone said "it missed me"'))
  const told: PhraseCheck = {
    check: async (pcm) => {
      const v = await check.check(pcm)
      trust?.verdict(v.agreed)
      deps.wakes?.checkedLocally(v.agreed)
      return v
    },
    close: () => check.close(),
  }
  return { check: told, trust }
}

async function onsetFor(
  comp: Composition,
  mode: 'wake' | 'button' | 'speech',
  deps: ListeningDeps,
): Promise<OnsetSource> {
  if (mode === 'speech') return new SpeechOnset(await SpeechDetector.create())
  const button = new ButtonOnset()
  deps.panel.on((e) => {
    if (e.kind === 'talk') button.pressed(e.atMs, e.heldMs)
  })
  if (mode === 'button') return button
  // The button's hold talks beside the wake phrase, and alone when the wake word cannot listen.
  const wake = deps.wake && (await wakeOnset(comp, deps.wake, deps))
  return wake ? new AnyOnset([wake, button]) : button
}

/**
 * The wake stage on the configured detector. A detector that cannot load (a missing or corrupt
 * model, no runtime) is an error on the LED and the status, with its message, and no stage: no
 * sound opens a session — nothing leaves the room unasked — and the speaker still mutes, shows
 * state and answers the button, whose hold still talks.
 */
async function wakeOnset(
  { config: c, clock, log, closers }: Composition,
  load: WakeLoad,
  deps: ListeningDeps,
): Promise<WakeOnset | undefined> {
  const wakeLog = log.child({ component: 'wake' })
  let stage: WakeOnset | undefined
  // Made while the models load; closed again if they cannot.
  const voiced = VoicedHistory.create()
  try {
    const detector = await load.detector
    load.hear((d) => stage?.detected(d))
    // Idle, the microphone is read once a scoring batch (the process wakes a quarter as often
    // while scores are far below every threshold), each chunk near one.
    load.batches((everyMs, nextMs) => deps.router.paceIdle(everyMs, nextMs))
    closers.add(followSensitivity(deps.device, detector, load.config, wakeLog))
    stage = new WakeOnset({
      detector: deps.reads ? alignedReads(detector, deps.reads) : detector,
      voiced: await voiced,
      clock,
      logger: wakeLog,
      preRollMs: c.listen.preRollMs,
      speakerAudible: () => deps.mic.echoGated,
      ...(deps.arbiter && { arbiter: deps.arbiter }),
      answering: () => deps.driver.answering,
    })
  } catch (err) {
    const code = (err as { code?: unknown }).code
    wakeLog.error(
      { event: 'wake_unavailable', code, err: errorText(err) },
      'the wake word cannot listen: only the button opens a session',
    )
    deps.device.fault('wake word', errorText(err))
    void voiced.then((v) => v.close()).catch(() => {})
    return undefined
  }
  const heard = stage
  deps.mic.onRoom((pcm, at) => heard.room(pcm, at))
  wakeLog.info({ phrases: heard.phrases }, 'listening for the wake phrase')
  return heard
}

/**
 * The detector, its resets also aligning the microphone's idle bursts with its chunks (they start
 * afresh at a reset: a session's end, a mute), so a chunk's last frame ends a burst and is scored
 * no later than if every frame were read as it came.
 */
function alignedReads(detector: WakeWordDetector, reads: MicReads): WakeWordDetector {
  return {
    phrases: detector.phrases,
    push: (frame, at, voiceNearby) => detector.push(frame, at, voiceNearby),
    setThresholds: (thresholds) => detector.setThresholds(thresholds),
    reset: () => {
      detector.reset()
      reads.align()
    },
    close: () => detector.close(),
  }
}
