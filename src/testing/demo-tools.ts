import type { Tool } from '../core/types.js'

/** A pretend door lock for the offline run and tests: it records what it was told to do. */
export class DemoLock {
  locked = true
  readonly log: string[] = []

  tool(): Tool<{ door: string }> {
    return {
      name: 'unlock_door',
      description: 'Unlocks a door of the house.',
      parameters: {
        type: 'object',
        properties: { door: { type: 'string', enum: ['front', 'back'] } },
        required: ['door'],
        additionalProperties: false,
      },
      critical: true,
      describe: (a) => `unlock the ${a.door} door`,
      call: async (_ctx, a) => {
        this.locked = false
        this.log.push(`unlock ${a.door}`)
        return { door: a.door, locked: false }
      },
    }
  }
}
