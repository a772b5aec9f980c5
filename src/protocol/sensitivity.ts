/**
 * How readily the wake word fires: `high` wakes on less (more false wakes), `low` asks more of it
 * (more missed wakes). The three words are the protocol's (a phone's `set_sensitivity`, the
 * status, Home Assistant's select); what each means as a threshold is the wake detector's
 * business (app/wake-detector.ts, docs/wake-word.md, "Sensitivity").
 */
export const SENSITIVITIES = ['low', 'normal', 'high'] as const
export type Sensitivity = (typeof SENSITIVITIES)[number]

export function isSensitivity(value: unknown): value is Sensitivity {
  return (SENSITIVITIES as readonly unknown[]).includes(value)
}
