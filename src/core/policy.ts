import type { Channel, Policy, Tool } from './types.js'

/** Per tool, per channel overrides, as configured by the household. */
export type PolicyTable = Readonly<Record<string, Partial<Record<Channel, Policy | undefined>>>>

/**
 * Defaults are stricter for voice than for text: anyone in the room can speak (a guest, the
 * television), while text comes from a paired phone whose owner is known.
 */
const DEFAULTS: Record<Channel, Policy> = { voice: 'ask', text: 'allow' }

export function policyFor(
  tool: Tool,
  channel: Channel,
  table: PolicyTable = {},
  /** This call's own criticality, when the tool decides it per call (`Tool.prepare`). */
  critical: boolean = tool.critical === true,
): Policy {
  const chosen = table[tool.name]?.[channel] ?? tool.policy?.[channel] ?? DEFAULTS[channel]
  // A critical call always needs a human's yes; configuration can make it stricter, never looser.
  if (critical && chosen === 'allow') return 'ask'
  return chosen
}
