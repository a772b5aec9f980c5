import type { ProbeResult } from '../../adapters/live-support/tool-call-probe.js'
import type { Check, CheckResult } from './check.js'
import type { ProviderWords } from './provider-checks.js'

/**
 * `doctor --probe` for one provider: runs its probe (a call made to block) and reports what the
 * model did beside what the capability table claims, loudly when they differ, and that approvals
 * will be dead air when the model waits. The same words for every provider.
 */
export function probeCheck<
  C extends { readonly probe: boolean; readonly model: string | undefined },
>(
  w: ProviderWords,
  o: {
    key: (ctx: C) => { readonly key: string } | Error
    /** What the capability table claims: the model's calls are asynchronous. */
    claim: (model: string) => boolean
    run: (ctx: C, apiKey: string, model: string) => Promise<ProbeResult>
  },
): Check<C> {
  return {
    name: `${w.provider} probe`,
    async run(ctx): Promise<CheckResult> {
      if (!ctx.probe) return { status: 'skip', summary: 'not asked for (--probe)' }
      const k = o.key(ctx)
      if (k instanceof Error) return { status: 'skip', summary: 'no API key' }
      const model = ctx.model
      if (!model) return { status: 'skip', summary: 'no model configured' }
      const t = { model, claim: o.claim(model) }
      const r = await o.run(ctx, k.key, model)
      const seen = r.verdict === 'asynchronous'
      const data = { model: t.model, verdict: r.verdict, heldMs: r.heldMs, tableSays: t.claim }
      if (r.verdict === 'no call') {
        return { status: 'warn', summary: `${t.model}: the model did not call the test tool`, data }
      }
      const said = `${t.model}: ${r.verdict} (a call held ${Math.round(r.heldMs / 1000)} s without its output)`
      if (seen !== t.claim) {
        return {
          status: 'warn',
          summary: `${said} — the capability table says ${t.claim ? 'asynchronous' : 'sequential'}: THEY DIFFER`,
          details: [
            seen
              ? 'the model kept talking: approvals would not be dead air, though the table treats them so'
              : 'the model fell silent while the call waited: every approval will be dead air on this model',
          ],
          data,
        }
      }
      return {
        status: seen ? 'ok' : 'warn',
        summary: `${said}, as the capability table says`,
        ...(seen ? {} : { details: ['approvals will be dead air on this model'] }),
        data,
      }
    },
  }
}
