import type { SqliteStore } from '../../adapters/sqlite/sqlite-store.js'
import type { TranscriptFeed } from '../../conversations/transcript-feed.js'
import type { DeviceState } from '../../device/device-state.js'
import type { WakeLog } from '../../device/wake-log.js'
import type { PanelController } from '../../panel/panel-controller.js'
import { listenMode } from '../config/schema.js'
import type { Appliance, ApplianceOptions } from './appliance-contract.js'
import { composeHousehold, servePhones } from './broker.js'
import type { Composition } from './composition.js'
import {
  composeTypedConversations,
  endOfSession,
  keepRetention,
  showStoreHealth,
} from './conversations.js'
import { audioFaults, composeAnnouncer, showStatus } from './device.js'
import { composeHome, composeMcpServers } from './home.js'
import { composeListening, routeMicrophone, wakeArbiter } from './listening.js'
import { composeProviderListener } from './provider-health.js'
import { composeProviders } from './providers.js'
import { openSound } from './sound.js'
import { composeGate, composeTools, restoreTimers } from './tools.js'
import { composeVoice } from './voice.js'
import type { WakeLoad } from './wake-load.js'

/** What the start composed before the panel answered: the rest is composed on it. */
interface BeforePanel {
  readonly store: SqliteStore
  readonly feed: TranscriptFeed
  readonly device: DeviceState
  readonly wakes: WakeLog | undefined
  readonly panel: PanelController
  readonly wake: WakeLoad | undefined
}

/**
 * Everything after the panel, in the order it starts: the household's broker, the gate, the sound,
 * the tools, the providers, the voice driver, the phone app and the listening loop. A module of its
 * own so that the service's bundle loads it as a chunk once the panel has started: its ~240 kB are
 * compiled and run after the button answers, not before (bench/RESULTS.md, "the rest after the
 * panel"). startAppliance closes what it opened if this throws.
 */
export async function composeAfterPanel(
  options: ApplianceOptions,
  comp: Composition,
  { store, feed, device, wakes, panel, wake }: BeforePanel,
): Promise<Appliance> {
  const { config, panel: panelConfig, policies } = options.loaded
  const { log, closers } = comp
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
}
