import { realClock } from '../../adapters/clock/real-clock.js'
import type { AccountReport } from '../../adapters/gemini/account-check.js'
import { checkAccount } from '../../adapters/gemini/account-check.js'
import { lookupCapabilities } from '../../adapters/gemini/capabilities.js'
import { probeGeminiToolCalls } from '../../adapters/gemini/probe.js'
import type { Logger } from '../../core/logger.js'
import { type GeminiKey, readGeminiKey } from '../gemini-env.js'
import type { Check, CheckResult } from './check.js'
import { probeCheck } from './probe-check.js'
import { keyCheck, modelCheck, modelsCheck, type ProviderWords } from './provider-checks.js'

export interface GeminiDoctorContext {
  readonly env: NodeJS.ProcessEnv
  readonly baseUrl: string | undefined
  readonly model: string | undefined
  /** Open a short live session to the model (otherwise it is only looked up in the listing). */
  readonly connect: boolean
  /** `--probe`: open one short session that makes a call block, and see what the model does. */
  readonly probe: boolean
  readonly logger: Logger
  /** Filled by the checks, so later ones reuse earlier answers. */
  key?: GeminiKey | Error
  account?: AccountReport | Error
}

function key(ctx: GeminiDoctorContext): GeminiKey | Error {
  if (!ctx.key) {
    try {
      ctx.key =
        readGeminiKey(ctx.env) ?? new Error('not set: export GEMINI_API_KEY or GEMINI_API_KEY_FILE')
    } catch (err) {
      ctx.key = err as Error
    }
  }
  return ctx.key
}

async function account(ctx: GeminiDoctorContext): Promise<AccountReport | Error> {
  const k = key(ctx)
  if (k instanceof Error) return k
  if (!ctx.account) {
    try {
      ctx.account = await checkAccount({
        apiKey: k.key,
        baseUrl: ctx.baseUrl,
        ...(ctx.connect && ctx.model !== undefined && { probeModel: ctx.model }),
        connectTimeoutMs: 10_000,
        logger: ctx.logger,
        clock: realClock(),
      })
    } catch (err) {
      ctx.account = err as Error
    }
  }
  return ctx.account
}

const DEAD_AIR =
  'this model makes approvals dead air: it cannot wait for a phone while talking, so the speaker plays a waiting cue meanwhile — choose a model with async calls (e.g. gemini-3.8-live) in provider.model'

const GEMINI: ProviderWords = { provider: 'Gemini', kind: 'live', deadAir: DEAD_AIR }

async function listedModels(ctx: GeminiDoctorContext) {
  const a = await account(ctx)
  return a instanceof Error ? a : { modelCount: a.modelCount, models: a.liveModels }
}

const geminiModelsCheck = modelsCheck(GEMINI, {
  hasKey: (ctx: GeminiDoctorContext) => !(key(ctx) instanceof Error),
  account: listedModels,
  data: (m) => ({
    id: m.id,
    displayName: m.displayName,
    known: m.known,
    asyncToolCalls: m.capabilities.asyncToolCalls,
    nonBlockingByDefault: m.capabilities.nonBlockingByDefault,
    blockingAllowed: m.capabilities.blockingAllowed,
    scheduling: m.capabilities.scheduling,
    transcription: m.capabilities.transcription,
    resumption: m.capabilities.resumption,
    note: m.capabilities.note,
  }),
})

const geminiModelCheck = modelCheck<GeminiDoctorContext>(GEMINI, {
  lookup: lookupCapabilities,
  async listed(ctx, model) {
    if (key(ctx) instanceof Error) return undefined
    const a = await account(ctx)
    return a instanceof Error ? undefined : a.liveModels.some((m) => m.id === model)
  },
})

const geminiConnectCheck: Check<GeminiDoctorContext> = {
  name: 'Gemini live connect',
  async run(ctx): Promise<CheckResult> {
    if (!ctx.model) return { status: 'skip', summary: 'no model configured (--model)' }
    if (!ctx.connect) {
      return { status: 'skip', summary: 'not asked: --connect opens a short session to the model' }
    }
    if (key(ctx) instanceof Error) return { status: 'skip', summary: 'no API key' }
    const a = await account(ctx)
    if (a instanceof Error || !a.probe) return { status: 'skip', summary: 'the model list failed' }
    const p = a.probe
    const caps = lookupCapabilities(ctx.model)
    const details = [`capability table: ${caps.capabilities.note}`]
    if (!caps.capabilities.asyncToolCalls) {
      details.push(DEAD_AIR)
    }
    if (!p.listed) details.push('the account does not list this model as a live model')
    if (!p.ok) return { status: 'fail', summary: `${p.model}: ${p.error}`, details, data: p }
    return {
      status: p.listed && caps.known && caps.capabilities.asyncToolCalls ? 'ok' : 'warn',
      summary: `${p.model}: setup complete in ${p.ms} ms`,
      details,
      data: { ...p, asyncToolCalls: caps.capabilities.asyncToolCalls, known: caps.known },
    }
  },
}

const geminiProbeCheck = probeCheck<GeminiDoctorContext>(GEMINI, {
  key,
  claim: (model) => lookupCapabilities(model).capabilities.asyncToolCalls,
  run: (ctx, apiKey, model) =>
    probeGeminiToolCalls({
      apiKey,
      model,
      baseUrl: ctx.baseUrl,
      logger: ctx.logger,
      clock: realClock(),
    }),
})

export const geminiChecks = [
  keyCheck(GEMINI, key),
  geminiModelsCheck,
  geminiModelCheck,
  geminiConnectCheck,
  geminiProbeCheck,
]
