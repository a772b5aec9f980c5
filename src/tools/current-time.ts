import type { Tool } from '../core/types.js'
import type { Clock } from '../ports/clock.js'

/** The current date and time in the device's time zone. Harmless: allowed on every channel. */
export function currentTimeTool(clock: Clock, timeZone?: string): Tool<Record<string, never>> {
  return {
    name: 'current_time',
    description: 'Returns the current local date and time.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    policy: { voice: 'allow', text: 'allow' },
    describe: () => 'tell the time',
    async call() {
      const now = new Date(clock.now())
      const zone = timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone
      return {
        iso: now.toISOString(),
        local: now.toLocaleString('en-GB', {
          timeZone: zone,
          dateStyle: 'full',
          timeStyle: 'short',
        }),
        timeZone: zone,
      }
    },
  }
}
