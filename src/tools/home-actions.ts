import type { Channel } from '../core/context.js'
import type { Policy } from '../core/policy.js'
import type { Tool } from '../core/tool.js'
import type { Publisher } from '../ports/publisher.js'

/** One named action from the configuration: a fixed payload to a fixed topic. */
export interface HomeAction {
  readonly name: string
  readonly description: string
  /** One human sentence for the phone, e.g. "unlock the front door". */
  readonly says?: string
  readonly topic: string
  readonly payload: string | Readonly<Record<string, unknown>>
  readonly qos: 0 | 1 | 2
  readonly retain: boolean
  readonly critical: boolean
  readonly policy?: Partial<Record<Channel, Policy>>
}

/**
 * A home action as a tool: the model can only trigger it, never choose the topic or the payload, so
 * what a phone approves ("unlock the front door") is exactly what is sent. It takes no arguments.
 */
export function homeActionTool(
  action: HomeAction,
  publisher: Publisher,
): Tool<Record<string, never>> {
  const payload =
    typeof action.payload === 'string' ? action.payload : JSON.stringify(action.payload)
  const says = action.says ?? action.description.replace(/\.$/, '').toLowerCase()
  return {
    name: action.name,
    description: action.description,
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    critical: action.critical,
    ...(action.policy ? { policy: action.policy } : {}),
    describe: () => says,
    async call(ctx) {
      if (ctx.signal.aborted) throw new Error('withdrawn before it was sent')
      try {
        await publisher.publish(action.topic, payload, { qos: action.qos, retain: action.retain })
      } catch (err) {
        throw new Error(
          `the home broker did not take the command (${err instanceof Error ? err.message : String(err)})`,
        )
      }
      ctx.logger.info({ tool: action.name, topic: action.topic }, 'home action sent')
      // "Sent", not "done": the broker has it; whether the lock turned is the device's business.
      return { sent: true, action: says }
    },
  }
}
