import type { Gate } from '../../core/gate.js'
import type { Persona } from '../../core/persona.js'
import type { ToolSet } from '../../core/tool-set.js'
import type { ShownState } from '../../panel/shown-state.js'
import type { AudioOut } from '../../ports/audio.js'
import type { LiveLLM } from '../../ports/live-llm.js'
import type { LedState } from '../../ports/panel.js'
import type { TranscriptStore } from '../../ports/transcript-store.js'
import { chimePcm } from '../../tools/chime.js'
import type { VoiceMic } from '../../voice/session-types.js'
import { VoiceDriver } from '../../voice/voice-driver.js'
import type { Composition } from './composition.js'

interface VoiceDeps {
  readonly live: LiveLLM
  readonly tools: ToolSet
  readonly gate: Gate
  readonly store: TranscriptStore
  readonly persona: Persona
  /** The session's microphone (the mic router's session route). */
  readonly mic: VoiceMic
  /** The speaker the model's audio goes to. */
  readonly speaker: AudioOut
  /** The speaker itself, for the waiting cue (not a drop of the model's audio). */
  readonly cueSpeaker: AudioOut
  readonly shown: ShownState
  /** Every change of what the LED shows. */
  readonly onState?: ((state: LedState) => void) | undefined
}

/** The voice driver: spoken sessions with the live model, their state on the LED and the status. */
export function composeVoice(
  { config: c, clock, log, closers }: Composition,
  deps: VoiceDeps,
): VoiceDriver {
  // Made when first needed: generating it is a few ms of start-up a device may never use.
  let cue: Uint8Array | undefined
  const driver = new VoiceDriver({
    llm: deps.live,
    tools: deps.tools,
    gate: deps.gate,
    store: deps.store,
    persona: deps.persona,
    clock,
    logger: log,
    mic: deps.mic,
    speaker: deps.speaker,
    listener: {
      state: (state) => {
        deps.onState?.(state)
        deps.shown.driver(state)
      },
      // A model without asynchronous calls is silent while a phone decides: fill the dead air.
      waiting: () => {
        cue ??= chimePcm(deps.cueSpeaker.sampleRateHz, 1)
        deps.cueSpeaker.write(cue)
      },
    },
    options: {
      budgetMs: c.session.budgetMinutes * 60_000,
      idleMs: c.session.idleTimeoutSeconds * 1000,
    },
  })
  closers.add(async () => {
    await driver.stop()
  })
  return driver
}
