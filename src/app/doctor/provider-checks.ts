import type { Check, CheckResult } from './check.js'

/** A model as a provider's account check lists it, with what the capability table says of it. */
interface ListedModel {
  readonly id: string
  readonly known: boolean
  readonly capabilities: { readonly asyncToolCalls: boolean; readonly note: string }
}

/** How a provider's checks name it and its models (`Gemini` / `live`, `OpenAI` / `realtime`). */
export interface ProviderWords {
  readonly provider: string
  readonly kind: string
  /** Why a model without asynchronous calls makes approvals dead air, and which to choose. */
  readonly deadAir: string
}

/** The provider's API key: set, and from where; or why not. */
export function keyCheck<C>(
  w: ProviderWords,
  key: (ctx: C) => { readonly source: string } | Error,
): Check<C> {
  return {
    name: `${w.provider} API key`,
    async run(ctx) {
      const k = key(ctx)
      if (k instanceof Error) return { status: 'fail', summary: k.message }
      return { status: 'ok', summary: `set, from ${k.source}`, data: { source: k.source } }
    },
  }
}

/** The models the account lists for live sessions, each beside the capability table's view. */
export function modelsCheck<C, M extends ListedModel>(
  w: ProviderWords,
  o: {
    hasKey: (ctx: C) => boolean
    account: (ctx: C) => Promise<{ modelCount: number; models: readonly M[] } | Error>
    /** What `--json` shows of each model. */
    data: (m: M) => Record<string, unknown>
  },
): Check<C> {
  return {
    name: `${w.provider} ${w.kind} models`,
    async run(ctx): Promise<CheckResult> {
      if (!o.hasKey(ctx)) return { status: 'skip', summary: 'no API key' }
      const a = await o.account(ctx)
      if (a instanceof Error) return { status: 'fail', summary: `cannot list models: ${a.message}` }
      const width = Math.max(0, ...a.models.map((m) => m.id.length))
      const details = a.models.map(
        (m) =>
          `${m.id.padEnd(width)}  async calls: ${m.capabilities.asyncToolCalls ? 'yes' : 'no '}  ${m.capabilities.note}`,
      )
      const data = a.models.map(o.data)
      if (a.models.length === 0) {
        return {
          status: 'fail',
          summary: `none of the account's ${a.modelCount} models is a ${w.kind} model`,
          data,
        }
      }
      const asyncCount = a.models.filter((m) => m.capabilities.asyncToolCalls).length
      return {
        status: asyncCount > 0 ? 'ok' : 'warn',
        summary: `${a.models.length} ${w.kind} models, ${asyncCount} with asynchronous calls`,
        details,
        data,
      }
    },
  }
}

/** The configured model: in the capability table, listed by the account, asynchronous or not. */
export function modelCheck<C extends { readonly model: string | undefined }>(
  w: ProviderWords,
  o: {
    lookup: (model: string) => Omit<ListedModel, 'id'>
    /** Whether the account lists the model (undefined when it could not be asked). */
    listed: (ctx: C, model: string) => Promise<boolean | undefined>
  },
): Check<C> {
  return {
    name: `${w.provider} model`,
    async run(ctx): Promise<CheckResult> {
      const model = ctx.model
      if (!model)
        return { status: 'skip', summary: 'no model configured (provider.model or --model)' }
      const { capabilities: c, known } = o.lookup(model)
      const details = [`capability table: ${c.note}`]
      if (!c.asyncToolCalls) details.push(w.deadAir)
      const listed = await o.listed(ctx, model)
      const data = { model, listed, known, asyncToolCalls: c.asyncToolCalls }
      if (listed === false) {
        details.push(`fix: pick one of the ${w.kind} models listed above for provider.model`)
        return {
          status: 'fail',
          summary: `${model}: the account does not list this model as a ${w.kind} model`,
          details,
          data,
        }
      }
      return {
        status: known && c.asyncToolCalls ? 'ok' : 'warn',
        summary: `${model}: ${listed ? 'listed by the account, ' : ''}asynchronous calls ${c.asyncToolCalls ? 'yes' : 'no'}`,
        details,
        data,
      }
    },
  }
}
