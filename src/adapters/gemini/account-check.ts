import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import { defaultPersona } from '../../core/persona.js'
import { type Clock, monotonicNow } from '../../ports/clock.js'
import type { LiveEvents } from '../../ports/live-llm.js'
import { lookupCapabilities, type ModelCapabilities } from './capabilities.js'
import { createClient } from './client.js'
import { GeminiLive } from './gemini-live.js'
import { redactKey } from './redact.js'

interface LiveModelInfo {
  /** Without the `models/` prefix, as the config names it. */
  readonly id: string
  readonly displayName: string | undefined
  /** Whether the capability table has a row for it (if not, the safe default is shown). */
  readonly known: boolean
  readonly capabilities: ModelCapabilities
}

interface ConnectProbe {
  readonly model: string
  /** The account lists this model as a live model. */
  readonly listed: boolean
  readonly ok: boolean
  readonly ms: number
  readonly error?: string
  readonly code?: string | undefined
}

export interface AccountReport {
  readonly modelCount: number
  readonly liveModels: readonly LiveModelInfo[]
  readonly probe?: ConnectProbe
}

export interface AccountCheckOptions {
  readonly apiKey: string
  readonly baseUrl?: string | undefined
  /** Also open a live connection to this model and close it once setup completes. */
  readonly probeModel?: string
  readonly connectTimeoutMs?: number
  readonly pageSize?: number
  readonly logger: Logger
  /** For the probe's connect deadline. */
  readonly clock: Clock
}

/**
 * What the account behind a key can do live: every model it lists that supports
 * `bidiGenerateContent` (the REST field `supportedGenerationMethods` is `supportedActions` in the
 * SDK), each marked with what the capability table says about it; optionally a short connect to
 * the configured model, since being listed does not prove a session opens.
 */
export async function checkAccount(options: AccountCheckOptions): Promise<AccountReport> {
  const ai = await createClient({ apiKey: options.apiKey, baseUrl: options.baseUrl })
  const liveModels: LiveModelInfo[] = []
  let modelCount = 0
  try {
    const pager = await ai.models.list({ config: { pageSize: options.pageSize ?? 100 } })
    for await (const m of pager) {
      modelCount++
      if (!m.name || !m.supportedActions?.includes('bidiGenerateContent')) continue
      const id = m.name.replace(/^models\//, '')
      const { capabilities, known } = lookupCapabilities(id)
      liveModels.push({ id, displayName: m.displayName, known, capabilities })
    }
  } catch (err) {
    throw new Error(redactKey(errorText(err), options.apiKey))
  }
  if (!options.probeModel) return { modelCount, liveModels }
  const listed = liveModels.some((m) => m.id === options.probeModel?.replace(/^models\//, ''))
  return {
    modelCount,
    liveModels,
    probe: { ...(await probe(options, options.probeModel)), listed },
  }
}

async function probe(
  options: AccountCheckOptions,
  model: string,
): Promise<Omit<ConnectProbe, 'listed'>> {
  const live = new GeminiLive({
    apiKey: options.apiKey,
    model,
    baseUrl: options.baseUrl,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    logger: options.logger,
    clock: options.clock,
  })
  const t0 = monotonicNow(options.clock)
  try {
    const session = await live.open(
      { persona: defaultPersona, tools: [], nonBlockingTools: false },
      ignoreEvents,
    )
    const ms = Math.round(monotonicNow(options.clock) - t0)
    await session.close()
    return { model, ok: true, ms }
  } catch (err) {
    const ms = Math.round(monotonicNow(options.clock) - t0)
    const e = err as Error & { code?: string }
    return { model, ok: false, ms, error: redactKey(e.message, options.apiKey), code: e.code }
  }
}

const ignoreEvents: LiveEvents = {
  audio() {},
  inputTranscription() {},
  outputTranscription() {},
  interrupted() {},
  generationComplete() {},
  turnComplete() {},
  toolCall() {},
  toolCallCancellation() {},
  goAway() {},
  resumptionUpdate() {},
  usage() {},
  closed() {},
}
