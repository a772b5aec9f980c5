import type { LiveCapabilities } from '../../ports/live-llm.js'

/** What a provider's capability table says of a model it has no row for. */
export const UNKNOWN_MODEL_NOTE =
  'unknown model: assumed synchronous calls only (approvals will be dead air)'

/**
 * A model's row in a provider's capability table: the first whose pattern matches the id, without
 * its pattern; or, for a model the table does not know, its safe default (`known: false`).
 */
export function lookupRow<C>(
  table: readonly (C & { readonly pattern: RegExp })[],
  id: string,
  unknown: C,
): { readonly capabilities: C; readonly known: boolean } {
  const row = table.find((r) => r.pattern.test(id))
  if (!row) return { capabilities: unknown, known: false }
  const { pattern: _pattern, ...capabilities } = row
  return { capabilities: capabilities as C, known: true }
}

/**
 * The port's view of a model's row, with what holds for every model of the provider: what the
 * voice driver branches on, never on the adapter.
 */
export function portView(
  model: string,
  row: { readonly asyncToolCalls: boolean; readonly transcription: boolean },
  provider: { readonly resumption: boolean; readonly lateTranscription: boolean },
): LiveCapabilities {
  return {
    model,
    asyncToolCalls: row.asyncToolCalls,
    transcription: row.transcription,
    ...provider,
  }
}
