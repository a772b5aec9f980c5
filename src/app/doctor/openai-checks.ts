import {
  checkOpenAIAccount,
  type OpenAIAccountReport,
} from '../../adapters/openai/account-check.js'
import { lookupOpenAICapabilities } from '../../adapters/openai/capabilities.js'
import { probeRealtimeToolCalls } from '../../adapters/openai/probe.js'
import { probeCheck } from './probe-check.js'
import { keyCheck, modelCheck, modelsCheck, type ProviderWords } from './provider-checks.js'

export interface OpenAIDoctorContext {
  readonly baseUrl: string | undefined
  readonly model: string | undefined
  /** `--probe`: open one short session that makes a call block, and see what the model does. */
  readonly probe: boolean
  /** The key and where it came from, or why there is none. */
  readonly openaiKey: { key: string; source: string } | Error
  /** Filled by the checks, so later ones reuse earlier answers. */
  openaiAccount?: OpenAIAccountReport | Error
}

async function account(ctx: OpenAIDoctorContext): Promise<OpenAIAccountReport | Error> {
  const k = ctx.openaiKey
  if (k instanceof Error) return k
  if (!ctx.openaiAccount) {
    try {
      ctx.openaiAccount = await checkOpenAIAccount({ apiKey: k.key, baseUrl: ctx.baseUrl })
    } catch (err) {
      ctx.openaiAccount = err as Error
    }
  }
  return ctx.openaiAccount
}

const OPENAI: ProviderWords = {
  provider: 'OpenAI',
  kind: 'realtime',
  deadAir:
    'this model makes approvals dead air: it waits for each function output, so the speaker plays a waiting cue meanwhile — choose gpt-realtime or later in provider.model',
}

const openaiModelsCheck = modelsCheck(OPENAI, {
  hasKey: (ctx: OpenAIDoctorContext) => !(ctx.openaiKey instanceof Error),
  async account(ctx) {
    const a = await account(ctx)
    return a instanceof Error ? a : { modelCount: a.modelCount, models: a.realtimeModels }
  },
  data: (m) => ({
    id: m.id,
    known: m.known,
    asyncToolCalls: m.capabilities.asyncToolCalls,
    note: m.capabilities.note,
  }),
})

const openaiModelCheck = modelCheck<OpenAIDoctorContext>(OPENAI, {
  lookup: lookupOpenAICapabilities,
  async listed(ctx, model) {
    if (ctx.openaiKey instanceof Error) return undefined
    const a = await account(ctx)
    return a instanceof Error ? undefined : a.realtimeModels.some((m) => m.id === model)
  },
})

const openaiKey = (ctx: OpenAIDoctorContext) => ctx.openaiKey

const openaiProbeCheck = probeCheck<OpenAIDoctorContext>(OPENAI, {
  key: openaiKey,
  claim: (model) => lookupOpenAICapabilities(model).capabilities.asyncToolCalls,
  run: (ctx, apiKey, model) => probeRealtimeToolCalls({ apiKey, model, baseUrl: ctx.baseUrl }),
})

/** The provider checks for `provider.kind: "openai"`, in the order doctor prints them. */
export const openaiChecks = [
  keyCheck(OPENAI, openaiKey),
  openaiModelsCheck,
  openaiModelCheck,
  openaiProbeCheck,
]
