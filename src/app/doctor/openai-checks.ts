import {
  checkOpenAIAccount,
  type OpenAIAccountReport,
} from '../../adapters/openai/account-check.js'
import { lookupOpenAICapabilities } from '../../adapters/openai/capabilities.js'
import { probeRealtimeToolCalls } from '../../adapters/openai/probe.js'
import type { Check, CheckResult } from './check.js'
import { probeCheck } from './probe-check.js'

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

const keyCheck: Check<OpenAIDoctorContext> = {
  name: 'OpenAI API key',
  async run(ctx) {
    const k = ctx.openaiKey
    if (k instanceof Error) return { status: 'fail', summary: k.message }
    return { status: 'ok', summary: `set, from ${k.source}`, data: { source: k.source } }
  },
}

const modelsCheck: Check<OpenAIDoctorContext> = {
  name: 'OpenAI realtime models',
  async run(ctx): Promise<CheckResult> {
    if (ctx.openaiKey instanceof Error) return { status: 'skip', summary: 'no API key' }
    const a = await account(ctx)
    if (a instanceof Error) return { status: 'fail', summary: `cannot list models: ${a.message}` }
    const width = Math.max(0, ...a.realtimeModels.map((m) => m.id.length))
    const details = a.realtimeModels.map(
      (m) =>
        `${m.id.padEnd(width)}  async calls: ${m.capabilities.asyncToolCalls ? 'yes' : 'no '}  ${m.capabilities.note}`,
    )
    const data = a.realtimeModels.map((m) => ({
      id: m.id,
      known: m.known,
      asyncToolCalls: m.capabilities.asyncToolCalls,
      note: m.capabilities.note,
    }))
    if (a.realtimeModels.length === 0) {
      return {
        status: 'fail',
        summary: `none of the account's ${a.modelCount} models is a realtime model`,
        data,
      }
    }
    const asyncCount = a.realtimeModels.filter((m) => m.capabilities.asyncToolCalls).length
    return {
      status: asyncCount > 0 ? 'ok' : 'warn',
      summary: `${a.realtimeModels.length} realtime models, ${asyncCount} with asynchronous calls`,
      details,
      data,
    }
  },
}

const modelCheck: Check<OpenAIDoctorContext> = {
  name: 'OpenAI model',
  async run(ctx): Promise<CheckResult> {
    if (!ctx.model)
      return { status: 'skip', summary: 'no model configured (provider.model or --model)' }
    const { capabilities: c, known } = lookupOpenAICapabilities(ctx.model)
    const details = [`capability table: ${c.note}`]
    if (!c.asyncToolCalls) {
      details.push(
        'this model makes approvals dead air: it waits for each function output, so the speaker plays a waiting cue meanwhile — choose gpt-realtime or later in provider.model',
      )
    }
    const a = ctx.openaiKey instanceof Error ? undefined : await account(ctx)
    const listed =
      a && !(a instanceof Error) ? a.realtimeModels.some((m) => m.id === ctx.model) : undefined
    const data = { model: ctx.model, listed, known, asyncToolCalls: c.asyncToolCalls }
    if (listed === false) {
      details.push('fix: pick one of the realtime models listed above for provider.model')
      return {
        status: 'fail',
        summary: `${ctx.model}: the account does not list this realtime model`,
        details,
        data,
      }
    }
    return {
      status: known && c.asyncToolCalls ? 'ok' : 'warn',
      summary: `${ctx.model}: ${listed ? 'listed by the account, ' : ''}asynchronous calls ${c.asyncToolCalls ? 'yes' : 'no'}`,
      details,
      data,
    }
  },
}

const openaiProbeCheck = probeCheck<OpenAIDoctorContext>('OpenAI probe', (ctx) => {
  const k = ctx.openaiKey
  if (k instanceof Error) return { skip: 'no API key' }
  const model = ctx.model
  if (!model) return { skip: 'no model configured' }
  return {
    model,
    claim: lookupOpenAICapabilities(model).capabilities.asyncToolCalls,
    run: () => probeRealtimeToolCalls({ apiKey: k.key, model, baseUrl: ctx.baseUrl }),
  }
})

/** The provider checks for `provider.kind: "openai"`, in the order doctor prints them. */
export const openaiChecks = [keyCheck, modelsCheck, modelCheck, openaiProbeCheck]
