import { mkdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { realClock } from '../adapters/clock/real-clock.js'
import { ConsoleApprover } from '../adapters/console/console-approver.js'
import { GeminiLive } from '../adapters/gemini/gemini-live.js'
import { GeminiLLM } from '../adapters/gemini/gemini-llm.js'
import type { PhoneAppServer } from '../adapters/http-static/phone-app-server.js'
import { createConversationEndpoint } from '../adapters/mqtt/conversation-endpoint.js'
import { createDeviceMqtt } from '../adapters/mqtt/index.js'
import { SqliteStore } from '../adapters/sqlite/sqlite-store.js'
import { MicRouter } from '../audio/mic-router.js'
import { SpeechDetector } from '../audio/speech-detector.js'
import { announcingApprover } from '../conversations/announcing-approver.js'
import { ConversationService } from '../conversations/conversation-service.js'
import { LiveConversations } from '../conversations/live-conversations.js'
import { PhoneGrants } from '../conversations/phone-grants.js'
import { recordingApprover } from '../conversations/recording-approver.js'
import { startRetention } from '../conversations/retention.js'
import { TranscriptFeed } from '../conversations/transcript-feed.js'
import { errorText, NocturnError } from '../core/errors.js'
import { Gate } from '../core/gate.js'
import { Grants } from '../core/grants.js'
import type { Logger } from '../core/logger.js'
import { defaultPersona, type Persona } from '../core/persona.js'
import type { Tool } from '../core/tool.js'
import { ToolSet } from '../core/tool-set.js'
import { PanelController } from '../panel/panel-controller.js'
import { ShownState } from '../panel/shown-state.js'
import type { Approver } from '../ports/approver.js'
import type { AudioOut, DropReport } from '../ports/audio.js'
import type { Clock } from '../ports/clock.js'
import type { LedState } from '../ports/panel.js'
import type { Publisher } from '../ports/publisher.js'
import { chimePcm } from '../tools/chime.js'
import { currentTimeTool } from '../tools/current-time.js'
import { homeActionTool } from '../tools/home-actions.js'
import { TimerService } from '../tools/timer-service.js'
import { timerTools } from '../tools/timers.js'
import { TurnLoop } from '../turn/turn-loop.js'
import { SessionLoop } from '../voice/session-loop.js'
import { VoiceDriver } from '../voice/voice-driver.js'
import type { SessionSummary } from '../voice/voice-session.js'
import { openAudio } from './audio.js'
import type { LoadedConfig } from './config/load.js'
import { createPanel } from './panel-factory.js'
import { startPhoneApp } from './phone-app.js'
import { PhoneKeyStore } from './phone-keys.js'
import { loadToolModules } from './tool-modules.js'

const DAY_MS = 86_400_000

export interface ApplianceOptions {
  readonly loaded: LoadedConfig
  readonly logger: Logger
  readonly clock?: Clock
  readonly env?: NodeJS.ProcessEnv
  /** The terminal, for the terminal panel and the console approver. */
  readonly input?: NodeJS.ReadStream
  readonly output?: NodeJS.WriteStream
  /** For the offline run: the WAV microphone plays in real time (default) or not. */
  readonly wavPaced?: boolean
  /** For benchmarks and soak runs: the WAV microphone starts again at the end of its file. */
  readonly wavLoop?: boolean
  readonly onSessionEnd?: (summary: SessionSummary) => void
  /** Every change of what the LED shows. */
  readonly onState?: (state: LedState) => void
  /** Every drop of the speaker's buffer (barge-in, the stop button), with what it discarded. */
  readonly onDrop?: (report: DropReport) => void
}

/** Everything the running appliance is made of, for the commands and the offline run. */
export interface Appliance {
  readonly store: SqliteStore
  readonly feed: TranscriptFeed
  readonly gate: Gate
  readonly tools: ToolSet
  readonly driver: VoiceDriver
  readonly panel: PanelController
  readonly conversations: ConversationService
  readonly live: LiveConversations
  readonly loop: SessionLoop
  readonly mqtt?: ReturnType<typeof createDeviceMqtt>
  /** The phone app's server, when it is served. */
  readonly phoneApp?: PhoneAppServer
  close(): Promise<void>
}

/**
 * Composition: the one place that reads the config and wires adapters to ports (docs/design.md §1).
 * Everything below is built from explicit objects; nothing reaches for a global.
 */
export async function startAppliance(options: ApplianceOptions): Promise<Appliance> {
  const { config: c, panel: panelConfig, policies } = options.loaded
  const clock = options.clock ?? realClock()
  const log = options.logger
  const closers: (() => Promise<void> | void)[] = []
  const close = async () => {
    for (const fn of closers.reverse()) {
      try {
        await fn()
      } catch (err) {
        log.warn({ err: errorText(err) }, 'close step failed')
      }
    }
  }
  try {
    const apiKey = c.provider.apiKey
    if (!apiKey) {
      throw new NocturnError(
        'NOC_ERR_GEMINI_NO_KEY',
        'no Gemini API key: set GEMINI_API_KEY, GEMINI_API_KEY_FILE, the "gemini-api-key" credential, or provider.apiKeyFile',
      )
    }
    mkdirSync(dirname(c.store.path), { recursive: true })
    const store = new SqliteStore(c.store.path)
    closers.push(() => store.close())
    const feed = new TranscriptFeed(store, log.child({ component: 'feed' }))

    // The broker: approvals, status, and the household's devices for home actions.
    let approver: Approver
    let publisher: Publisher | undefined
    let mqtt: ReturnType<typeof createDeviceMqtt> | undefined
    const phoneKeys = new PhoneKeyStore(c.phonesDir)
    if (c.mqtt) {
      mqtt = createDeviceMqtt({
        url: c.mqtt.url,
        deviceId: c.mqtt.deviceId,
        prefix: c.mqtt.prefix,
        ...(c.mqtt.username !== undefined && { username: c.mqtt.username }),
        ...(c.mqtt.password !== undefined && { password: c.mqtt.password }),
        ...(c.mqtt.ca !== undefined && { ca: readFileSync(c.mqtt.ca) }),
        ...(c.mqtt.cert !== undefined && { cert: readFileSync(c.mqtt.cert) }),
        ...(c.mqtt.key !== undefined && { key: readFileSync(c.mqtt.key) }),
        model: c.provider.model,
        phones: () => phoneKeys.keys(),
        selfApproval: c.mqtt.selfApproval,
        audience: audienceOf(phoneKeys.list().map((p) => p.name)),
        logger: log.child({ component: 'mqtt' }),
        clock,
        // Connected once the device listens (below): listening does not wait for the broker.
        connect: false,
      })
      closers.push(() => mqtt?.close())
      // Followers on a phone see approvals come and go next to the messages.
      approver = announcingApprover(mqtt.approver, feed)
      publisher = mqtt.connection
    } else {
      // No broker, no phone: asked on the terminal, and denied when there is no terminal.
      log.warn({}, 'no mqtt configured: approvals are asked on the terminal, or denied')
      approver = new ConsoleApprover({
        input: options.input ?? process.stdin,
        output: options.output ?? process.stdout,
        interactive: (options.input ?? process.stdin).isTTY === true,
        autoAnswer: 'deny',
      })
    }
    const gate = new Gate({
      policies,
      // Every ending is kept for the phone's History, whichever approver asked.
      approver: recordingApprover(approver, store.history, clock),
      grants: new Grants(store),
      clock,
      approvalTimeoutMs: c.session.approvalTimeoutSeconds * 1000,
    })

    const panelLog = log.child({ component: 'panel' })
    const panel = new PanelController({
      panel: await createPanel(panelConfig, {
        clock,
        logger: panelLog,
        ...(options.env && { env: options.env }),
        ...(options.input && { input: options.input }),
        ...(options.output && { output: options.output }),
      }),
      clock,
      logger: panelLog,
      longPressMs: panelConfig.longPressMs,
    })
    closers.push(() => panel.close())

    const audio = await openAudio(
      {
        backend: c.audio.backend,
        capture: c.audio.backend === 'wav' ? (c.audio.inputWav as string) : c.audio.capturePcm,
        playback:
          c.audio.backend === 'wav'
            ? (c.audio.outputWav ?? `${dirname(c.store.path)}/speaker.wav`)
            : c.audio.playbackPcm,
        echo: c.audio.echo,
        echoTailMs: c.audio.tailMs,
        wavPaced: options.wavPaced ?? true,
        ...(options.wavLoop !== undefined && { wavLoop: options.wavLoop }),
      },
      {
        clock,
        logger: log.child({ component: 'audio' }),
        onError: (e) => {
          log.error({ code: e.code, err: e.message }, 'audio device failed')
          panel.setActivity('error')
        },
      },
    )
    closers.push(() => audio.speaker.close())
    const speaker = options.onDrop ? observedDrops(audio.speaker, options.onDrop) : audio.speaker

    const timeZone = c.persona.timeZone
    const timers = new TimerService({
      store,
      clock,
      sink: audio.speaker,
      logger: log.child({ component: 'timers' }),
    })
    closers.push(() => timers.close())
    const tools: Tool[] = [currentTimeTool(clock, timeZone), ...timerTools(timers, clock, timeZone)]
    if (c.homeActions.length > 0 && !publisher) {
      throw new NocturnError(
        'NOC_ERR_BAD_REQUEST',
        'homeActions need the broker: configure "mqtt" or remove them',
      )
    }
    for (const a of c.homeActions) tools.push(homeActionTool(a, publisher as Publisher) as Tool)
    tools.push(
      ...(await loadToolModules(c.tools.modules, {
        clock,
        logger: log.child({ component: 'tool-module' }),
        ...(publisher && { publisher }),
      })),
    )
    const toolSet = new ToolSet(tools)

    const persona: Persona = {
      instruction: c.persona.instruction ?? defaultPersona.instruction,
      voice: c.persona.voice ?? defaultPersona.voice,
      language: c.persona.language ?? defaultPersona.language,
    }
    const live = new GeminiLive({
      apiKey,
      model: c.provider.model,
      ...(c.provider.baseUrl && { baseUrl: c.provider.baseUrl }),
      logger: log.child({ component: 'gemini-live' }),
      clock,
    })
    const llm = new GeminiLLM({
      apiKey,
      model: c.provider.textModel,
      ...(c.provider.baseUrl && { baseUrl: c.provider.baseUrl }),
      logger: log.child({ component: 'gemini' }),
    })

    // The LED and the status show the driver's state, or `error` and why while a device is failing.
    const shown = new ShownState((state, reason) => {
      if (state !== 'muted') panel.setActivity(state)
      void mqtt?.status.setState(state, driver.muted, reason)
    })
    store.onWriteHealth((failing) => {
      if (failing) log.error({ event: 'store_unwritable', err: failing }, 'store cannot be written')
      else log.info({}, 'store writable again')
      shown.fault('store', failing)
    })
    const router = new MicRouter(audio.mic, {
      onHealth: (h) => {
        if (!h.ok) log.warn({ reason: h.reason }, 'microphone hears nothing')
        else log.info({}, 'microphone hears again')
        shown.fault('microphone', h.ok ? undefined : h.reason)
      },
    })
    // Made when first needed: generating it is a few ms of start-up a device may never use.
    let cue: Uint8Array | undefined
    const driver = new VoiceDriver({
      llm: live,
      tools: toolSet,
      gate,
      store: feed,
      persona,
      clock,
      logger: log,
      mic: router.sessionMic(),
      speaker,
      listener: {
        state: (state) => {
          options.onState?.(state)
          shown.driver(state)
        },
        // A model without asynchronous calls is silent while a phone decides: fill the dead air.
        waiting: () => {
          cue ??= chimePcm(audio.speaker.sampleRateHz, 1)
          audio.speaker.write(cue)
        },
      },
      options: {
        budgetMs: c.session.budgetMinutes * 60_000,
        idleMs: c.session.idleTimeoutSeconds * 1000,
      },
    })
    closers.push(async () => {
      await driver.stop()
    })
    panel.on((e) => {
      if (e.kind === 'mute') {
        driver.setMuted(e.muted)
        void mqtt?.status.setState(shown.reason ? 'error' : driver.state, e.muted, shown.reason)
      } else if (e.kind === 'stop_speaking') driver.stopSpeaking()
    })

    const liveConversations = new LiveConversations()
    const conversations = new ConversationService({
      store: feed,
      turns: new TurnLoop({
        llm,
        tools: toolSet,
        gate,
        store: feed,
        persona,
        clock,
        logger: log,
      }),
      live: liveConversations,
      clock,
      logger: log.child({ component: 'conversations' }),
    })
    if (mqtt && c.mqtt) {
      const endpoint = createConversationEndpoint({
        connection: mqtt.connection,
        service: conversations,
        grants: new PhoneGrants({
          grants: gate.grants,
          clock,
          logger: log.child({ component: 'grants' }),
        }),
        feed,
        history: store.history,
        phones: () => phoneKeys.keys(),
        deviceId: c.mqtt.deviceId,
        prefix: c.mqtt.prefix,
        logger: log.child({ component: 'conversations-mqtt' }),
        clock,
      })
      // Closed before the broker connection (closers run in reverse).
      closers.push(() => endpoint.close())
    }
    // The household phone app: static files and /config.json; it talks to the broker itself.
    const phoneApp = await startPhoneApp(c, log.child({ component: 'phone-app' }))
    if (phoneApp) closers.push(() => phoneApp.close())
    if (c.retention.days !== undefined || c.retention.keep !== undefined) {
      const stop = startRetention(
        store,
        { days: c.retention.days, keep: c.retention.keep, everyMs: DAY_MS },
        clock,
        log.child({ component: 'retention' }),
      )
      closers.push(stop)
    }

    const detector = await SpeechDetector.create()
    closers.push(() => detector.close())
    const loop = new SessionLoop({
      router,
      detector,
      driver,
      live: liveConversations,
      logger: log.child({ component: 'listen' }),
      clock,
      ...(options.onSessionEnd && { onSessionEnd: options.onSessionEnd }),
    })

    const { rungLate, missed } = timers.start()
    if (rungLate.length + missed.length > 0) {
      log.info({ rungLate: rungLate.length, missed: missed.length }, 'timers restored')
    }
    await panel.start()
    await loop.start()
    closers.push(() => loop.stop())
    log.info(
      {
        event: 'nocturn_running',
        model: c.provider.model,
        asyncToolCalls: live.capabilities.asyncToolCalls,
        audio: c.audio.backend,
        panel: panelConfig.backend,
        broker: c.mqtt ? 'mqtt' : 'none',
        tools: toolSet.names().length,
      },
      'nocturn running',
    )
    // An approval asked before this first connection is made waits for it (bounded by the connect
    // timeout); "online" goes out once its subscriptions are answered (adapters/mqtt/status.ts).
    mqtt?.connection.start()
    return {
      store,
      feed,
      gate,
      tools: toolSet,
      driver,
      panel,
      conversations,
      live: liveConversations,
      loop,
      ...(mqtt && { mqtt }),
      ...(phoneApp && { phoneApp }),
      close,
    }
  } catch (err) {
    await close()
    throw err
  }
}

/** The speaker, telling `onDrop` about every drop after it happened. */
function observedDrops(inner: AudioOut, onDrop: (r: DropReport) => void): AudioOut {
  return {
    sampleRateHz: inner.sampleRateHz,
    write: (pcm) => inner.write(pcm),
    endOfReply: () => inner.endOfReply(),
    drop: () => {
      const r = inner.drop()
      onDrop(r)
      return r
    },
    playedMs: () => inner.playedMs(),
    queuedMs: () => inner.queuedMs(),
    close: () => inner.close(),
  }
}

/** Who the model says it is waiting for: the one paired phone by name, or "your phones". */
function audienceOf(names: readonly string[]): string {
  if (names.length === 1 && names[0]) return names[0]
  return names.length === 0 ? 'your phone' : 'your phones'
}
