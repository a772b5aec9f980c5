import { errorText, NocturnError } from '../../core/errors.js'
import { defaultPersona, type Persona } from '../../core/persona.js'
import type { ProviderFailure, ProviderListener } from '../../ports/provider-listener.js'
import type { Speech } from '../../ports/speech.js'
import { FailoverLive } from '../../voice/failover-live.js'
import { failoverLLM, failoverSpeech } from '../../voice/failover-models.js'
import { ProviderOrder } from '../../voice/provider-order.js'
import { describeProvider } from '../config/provider-names.js'
import { type Config, type ProviderConfig, providerPlace } from '../config/schema.js'
import type { Composition } from './composition.js'
import { type ProviderModels, providerModels } from './provider-registry.js'

/**
 * Every provider's API key, checked before anything is opened: a configured provider without one
 * could never answer, and the household should hear which one at start, not at the first failover.
 */
export function checkProviderKeys(c: Config): void {
  c.providers.forEach((provider, i) => {
    if (provider.apiKey) return
    const { name, keyHelp } = describeProvider(provider)
    throw new NocturnError(
      'NOC_ERR_PROVIDER_NO_KEY',
      `no ${name} API key for ${providerPlace(c, i)}: ${keyHelp}`,
    )
  })
}

/** Who the speaker is: the configured persona, each part the default where unset. */
function personaOf(c: Config): Persona {
  return {
    instruction: c.persona.instruction ?? defaultPersona.instruction,
    voice: c.persona.voice ?? defaultPersona.voice,
    language: c.persona.language ?? defaultPersona.language,
  }
}

/**
 * Who hears of every attempt to open a provider's session: listeners added at any time during
 * composition (the status, the LED, the phone, Home Assistant, the room's spoken "why").
 */
interface ProviderListeners {
  add(listener: ProviderListener): void
}

/** Tells each added listener in turn; one that throws does not keep the others from hearing. */
function fanOut(log: Composition['log']): ProviderListener & ProviderListeners {
  const listeners: ProviderListener[] = []
  const each = (what: string, tell: (l: ProviderListener) => void) => {
    for (const l of listeners) {
      try {
        tell(l)
      } catch (err) {
        log.error(
          { event: 'provider_listener_failed', what, err: errorText(err) },
          'a provider listener failed',
        )
      }
    }
  }
  return {
    add: (l) => listeners.push(l),
    reached: (provider) => each('reached', (l) => l.reached(provider)),
    failed: (failure: ProviderFailure) => each('failed', (l) => l.failed(failure)),
    unreachable: (failures) => each('unreachable', (l) => l.unreachable(failures)),
  }
}

/**
 * The models: the LiveLLM the voice driver speaks with, the LLM that answers typed messages, the
 * Speech announcements are said with — every configured provider's (through the registry), behind
 * the failover in the configured order — the persona they are given, and `listeners`, where
 * whoever shows or says which provider answered registers.
 */
export async function composeProviders({ config: c, clock, log }: Composition): Promise<
  ProviderModels & {
    persona: Persona
    listeners: ProviderListeners
    /** One provider's own speech (the room's "why" sentences are made in its voice). */
    speechOf: (provider: string) => Speech | undefined
  }
> {
  checkProviderKeys(c)
  const models = await Promise.all(
    c.providers.map((p: ProviderConfig) =>
      providerModels({ ...p, apiKey: p.apiKey ?? '' }, { logger: log, clock }),
    ),
  )
  const listeners = fanOut(log)
  const order = new ProviderOrder({
    names: c.providers.map((p) => p.kind),
    clock,
    log: log.child({ component: 'failover' }),
    listener: listeners,
  })
  return {
    live: new FailoverLive(
      models.map((m) => m.live),
      order,
    ),
    llm: failoverLLM(
      models.map((m) => m.llm),
      order,
    ),
    speech: failoverSpeech(
      models.map((m) => m.speech),
      order,
    ),
    persona: personaOf(c),
    listeners,
    speechOf: (provider) => models[c.providers.findIndex((p) => p.kind === provider)]?.speech,
  }
}
