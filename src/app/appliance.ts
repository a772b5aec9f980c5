import { realClock } from '../adapters/clock/real-clock.js'
import type { PhoneAppServer } from '../adapters/http-static/phone-app-server.js'
import type { SqliteStore } from '../adapters/sqlite/sqlite-store.js'
import type { ConversationService } from '../conversations/conversation-service.js'
import type { LiveConversations } from '../conversations/live-conversations.js'
import type { TranscriptFeed } from '../conversations/transcript-feed.js'
import type { Gate } from '../core/gate.js'
import type { Logger } from '../core/logger.js'
import type { ToolSet } from '../core/tool-set.js'
import type { Announcer } from '../device/announcer.js'
import type { DeviceState } from '../device/device-state.js'
import type { PanelController } from '../panel/panel-controller.js'
import type { DropReport } from '../ports/audio.js'
import type { Clock } from '../ports/clock.js'
import type { LedState } from '../ports/panel.js'
import type { ProviderListener } from '../ports/provider-listener.js'
import type { SessionLoop } from '../voice/session-loop.js'
import type { SessionSummary } from '../voice/session-types.js'
import type { VoiceDriver } from '../voice/voice-driver.js'
import { composeHousehold, type DeviceMqtt, servePhones } from './compose/broker.js'
import { Closers, type Composition } from './compose/composition.js'
import {
  composeTypedConversations,
  endOfSession,
  keepRetention,
  openConversationStore,
  showStoreHealth,
} from './compose/conversations.js'
import { audioFaults, composeAnnouncer, composeDevice, showStatus } from './compose/device.js'
import { composeHome, composeMcpServers } from './compose/home.js'
import { composeListening, routeMicrophone, wakeArbiter } from './compose/listening.js'
import { composePanel } from './compose/panel.js'
import { composeProviderListener } from './compose/provider-health.js'
import { checkProviderKeys, composeProviders } from './compose/providers.js'
import { openSound } from './compose/sound.js'
import { composeGate, composeTools, restoreTimers } from './compose/tools.js'
import { composeVoice } from './compose/voice.js'
import { loadWake } from './compose/wake-load.js'
import { composeWakeLog } from './compose/wake-log.js'
import type { LoadedConfig } from './config/load.js'
import { listenMode } from './config/schema.js'

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
  /**
   * The WAV microphone starts again at the end of its file: the phone demo (`npm start -- --phone`)
   * keeps a room to hear until Ctrl-C.
   */
  readonly wavLoop?: boolean
  readonly onSessionEnd?: (summary: SessionSummary) => void
  /** Every change of what the LED shows. */
  readonly onState?: (state: LedState) => void
  /**
   * Every drop of the speaker's buffer (barge-in, the stop button), with what it discarded: the
   * offline scene prints it on its timeline.
   */
  readonly onDrop?: (report: DropReport) => void
  /** Every earcon played (a wake, a press to talk): the offline scene prints it. */
  readonly onEarcon?: (ms: number) => void
  /**
   * Start listening only once Home Assistant's tools are first listed (or failed to be): the
   * offline scene's session must open with them, as a session keeps the list it opened with.
   */
  readonly homeListedFirst?: boolean
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
  /** The device's state: mute, volume, faults, what it is doing (its one owner). */
  readonly device: DeviceState
  readonly announcer: Announcer
  /** Told of each attempt to reach a provider: the status, the LED and the room's spoken why. */
  readonly providers: ProviderListener
  readonly mqtt?: DeviceMqtt
  /** The phone app's server, when it is served. */
  readonly phoneApp?: PhoneAppServer
  close(): Promise<void>
}

/**
 * Composition: the one place that reads the config and wires adapters to ports (docs/design.md §1).
 * Each concern is composed in its module under compose/; this keeps the order they start in, and
 * every part registers its closer as it opens, so they close in the reverse order.
 */
export async function startAppliance(options: ApplianceOptions): Promise<Appliance> {
  const { config, panel: panelConfig, policies } = options.loaded
  const log = options.logger
  const clock = options.clock ?? realClock()
  const closers = new Closers(log)
  const comp: Composition = { config, clock, log, closers }
  try {
    checkProviderKeys(config)
    const { store, feed } = openConversationStore(comp)
    const device = composeDevice(comp, store)
    const wakes = composeWakeLog(comp, store)
    const panel = await composePanel(comp, device, panelConfig, options)
    // The button answers (mute, the LED) from here on, before anything slower is composed; then
    // the wake models load on their own thread while the rest starts (issue 47): natively
    // 0.1–1 s, on WASM 10 s or more on a slow board.
    await panel.start()
    const wake = loadWake(comp, device, wakes)
    // The few ms until its thread is asked for the models, before the rest is composed: that
    // thread, not the composition, is what listening waits for.
    await wake?.asked
    const household = composeHousehold(
      comp,
      feed,
      { state: device, announce: (text) => announcer.announce(text) },
      options,
      { push: store.push, owners: store.owners },
    )
    showStatus(device, household.mqtt, listenMode(comp.config.listen) === 'wake')
    const gate = composeGate(comp, policies, household.approver, store, store.history)
    const sound = await openSound(comp, device, audioFaults(comp, device), options)
    const { tools, timers } = await composeTools(comp, {
      store,
      speaker: sound.speaker.alerts,
      device,
      publisher: household.publisher,
    })
    await composeHome(comp, tools, options.homeListedFirst === true)
    await composeMcpServers(comp, tools)
    const { live, llm, speech, speechOf, persona, listeners } = await composeProviders(comp)
    const announcer = composeAnnouncer(comp, { device, speech, persona, speaker: sound.speaker })

    const providers = composeProviderListener(comp, {
      device,
      speaker: sound.voiceSpeaker,
      persona,
      speechFor: speechOf,
    })
    listeners.add(providers)
    showStoreHealth(comp, store, device)
    const router = routeMicrophone(comp, sound.mic, device, sound.reads)
    const driver = composeVoice(comp, {
      live,
      tools,
      gate,
      store: feed,
      persona,
      mic: router.sessionMic(),
      speaker: sound.voiceSpeaker,
      cueSpeaker: sound.speaker.alerts,
      device,
      onState: options.onState,
    })

    const typed = composeTypedConversations(comp, { feed, llm, tools, gate, persona })
    const phoneApp = await servePhones(comp, {
      household,
      gate,
      feed,
      device,
      history: store.history,
      wakes,
      ...typed,
    })
    keepRetention(comp, store)
    const loop = await composeListening(comp, {
      router,
      driver,
      live: typed.live,
      mic: sound.mic,
      speaker: sound.speaker,
      panel,
      device,
      arbiter: wakeArbiter(comp, household.mqtt, device),
      wakes,
      settings: store,
      wake,
      reads: sound.reads,
      onFalseWake: () => device.countFalseWake(),
      ...(options.onEarcon && { onEarcon: options.onEarcon }),
      onSessionEnd: (summary) => {
        endOfSession(store)
        options.onSessionEnd?.(summary)
      },
    })

    restoreTimers(comp, timers)
    await loop.start()
    closers.add(() => loop.stop())
    log.info(
      {
        event: 'nocturn_running',
        model: config.provider.model,
        providers: config.providers.map((p) => p.kind),
        asyncToolCalls: live.capabilities.asyncToolCalls,
        audio: config.audio.backend,
        panel: panelConfig.backend,
        broker: config.mqtt ? 'mqtt' : 'none',
        listen: listenMode(config.listen),
        tools: tools.names().length,
      },
      'nocturn running',
    )
    // An approval asked before this first connection is made waits for it (bounded by the connect
    // timeout); "online" goes out once its subscriptions are answered (adapters/mqtt/status.ts).
    household.mqtt?.connection.start()
    return {
      store,
      feed,
      gate,
      tools,
      driver,
      panel,
      ...typed,
      loop,
      device,
      announcer,
      providers,
      ...(household.mqtt && { mqtt: household.mqtt }),
      ...(phoneApp && { phoneApp }),
      close: () => closers.close(),
    }
  } catch (err) {
    await closers.close()
    throw err
  }
}
