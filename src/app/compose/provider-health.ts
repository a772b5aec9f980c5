import { dirname, join } from 'node:path'
import { EspeakSpeech } from '../../adapters/espeak-ng/espeak-speech.js'
import { WavFolder } from '../../adapters/wav/wav-folder.js'
import type { Persona } from '../../core/persona.js'
import type { DeviceState } from '../../device/device-state.js'
import { ProviderHealthListener } from '../../device/provider-health.js'
import { SpokenWhy } from '../../device/spoken-why.js'
import { WhyAudio } from '../../device/why-audio.js'
import type { AudioOut } from '../../ports/audio.js'
import type { ProviderFailure, ProviderListener } from '../../ports/provider-listener.js'
import type { Speech } from '../../ports/speech.js'
import type { Composition } from './composition.js'

/** The folder beside the store where the sentences made by a provider's speech are kept. */
export const WHY_SENTENCES_DIR = 'why-sentences'

interface ProviderHealthDeps {
  readonly device: DeviceState
  /** The speaker the model's replies go to (the voice driver's): the sentence is a reply. */
  readonly speaker: Pick<AudioOut, 'sampleRateHz' | 'write' | 'endOfReply'>
  readonly persona: Persona
  /** Each provider's own speech, by its name (`provider.kind`); undefined: none. */
  readonly speechFor: (provider: string) => Speech | undefined
  /** The local voice; espeak-ng on PATH when not given (tests name another command). */
  readonly local?: Speech | undefined
}

/**
 * What the failover tells of each attempt to reach a provider (ports/provider-listener.ts), for
 * the whole device: the providers' health and the `voice service` fault into the device's state
 * (the LED, the status, the phone, Home Assistant), the room's spoken "why" when none can be
 * reached, and the sentences made with a provider's speech each time one is reached.
 */
export function composeProviderListener(
  { config: c, log, closers }: Composition,
  deps: ProviderHealthDeps,
): ProviderListener {
  const health = new ProviderHealthListener(deps.device)
  const audio = new WhyAudio({
    store: new WavFolder(join(dirname(c.store.path), WHY_SENTENCES_DIR)),
    speechFor: deps.speechFor,
    local: deps.local ?? new EspeakSpeech(),
    persona: deps.persona,
    rateHz: deps.speaker.sampleRateHz,
    logger: log,
  })
  const spoken = new SpokenWhy({ device: deps.device, speaker: deps.speaker, audio, logger: log })
  // The sentences are made once the session that reached the provider has ended: nothing competes
  // with a live conversation for the network or the board.
  const toMake = new Set<string>()
  const makeWhenFree = () => {
    if (deps.device.snapshot.activity !== 'idle') return
    for (const provider of toMake) audio.make(provider)
    toMake.clear()
  }
  const unsubscribe = deps.device.subscribe((_s, change) => {
    if (change.kind === 'activity') makeWhenFree()
  })
  closers.add(() => {
    unsubscribe()
    spoken.close()
    audio.close()
  })
  return {
    reached: (provider: string) => {
      health.reached(provider)
      toMake.add(provider)
      makeWhenFree()
    },
    failed: (failure: ProviderFailure) => health.failed(failure),
    unreachable: (failures: readonly ProviderFailure[]) => {
      health.unreachable(failures)
      spoken.unreachable(failures)
    },
  }
}
