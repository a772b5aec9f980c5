import type { PhoneAppServer } from '../../adapters/http-static/phone-app-server.js'
import type { SqliteStore } from '../../adapters/sqlite/sqlite-store.js'
import type { ConversationService } from '../../conversations/conversation-service.js'
import type { LiveConversations } from '../../conversations/live-conversations.js'
import type { TranscriptFeed } from '../../conversations/transcript-feed.js'
import type { Gate } from '../../core/gate.js'
import type { Logger } from '../../core/logger.js'
import type { ToolSet } from '../../core/tool-set.js'
import type { Announcer } from '../../device/announcer.js'
import type { DeviceState } from '../../device/device-state.js'
import type { PanelController } from '../../panel/panel-controller.js'
import type { DropReport } from '../../ports/audio.js'
import type { Clock } from '../../ports/clock.js'
import type { LedState } from '../../ports/panel.js'
import type { ProviderListener } from '../../ports/provider-listener.js'
import type { SessionLoop } from '../../voice/session-loop.js'
import type { SessionSummary } from '../../voice/session-types.js'
import type { VoiceDriver } from '../../voice/voice-driver.js'
import type { LoadedConfig } from '../config/load.js'
import type { DeviceMqtt } from './broker.js'

// What the appliance is given and what it is made of: startAppliance (app/appliance.ts) composes
// the part before the panel answers, after-panel.ts the rest, and both speak of these.

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
