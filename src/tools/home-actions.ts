import { errorText, isNocturnError, NocturnError } from '../core/errors.js'
import type { Channel, Policy, Tool } from '../core/types.js'
import type { Publisher } from '../ports/publisher.js'

/** One named action from the configuration: a fixed payload to a fixed topic. */
export interface HomeAction {
  readonly name: string
  readonly description: string
  /** One human sentence for the phone, e.g. "unlock the front door". */
  readonly says?: string | undefined
  readonly topic: string
  readonly payload: string | Readonly<Record<string, unknown>>
  readonly qos: 0 | 1 | 2
  readonly retain: boolean
  readonly critical: boolean
  readonly policy?: Partial<Record<Channel, Policy | undefined>> | undefined
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
      if (ctx.signal.aborted) throw new NocturnError('NOC_ERR_CANCELLED', 'the call was withdrawn')
      // At least QoS 1: only an acknowledged publish can come back refused (MQTT 5 reason code),
      // so the result is what the broker said, not what we hoped (docs/protocol.md, home actions).
      const qos = action.qos === 0 ? 1 : action.qos
      const log = ctx.logger.child({ tool: action.name, topic: action.topic })
      try {
        await publisher.publish(action.topic, payload, { qos, retain: action.retain })
      } catch (err) {
        const refused = isNocturnError(err) && err.code === 'NOC_ERR_BROKER_REFUSED'
        log.warn(
          {
            event: 'home_action_not_sent',
            err: errorText(err),
            refused,
          },
          'home action not sent',
        )
        if (refused) {
          throw new NocturnError(
            'NOC_ERR_BROKER_REFUSED',
            `The home broker refused the command, so I did not ${says}: it was not sent (${err.message}). Nothing happened; the speaker's broker rights need fixing.`,
          )
        }
        throw new NocturnError(
          'NOC_ERR_BROKER_UNREACHABLE',
          `The home broker did not take the command, so I did not ${says}: it was not sent.`,
        )
      }
      log.info({ event: 'home_action_sent', acknowledged: true }, 'home action sent')
      // "Sent", not "done": the broker acknowledged it; whether the lock turned is the lock's
      // business.
      return { sent: true, acknowledgedByBroker: true, action: says }
    },
  }
}
