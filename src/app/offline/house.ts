import { join } from 'node:path'
import { EmbeddedBroker } from '../../adapters/aedes/broker.js'
import { realClock } from '../../adapters/clock/real-clock.js'
import { MqttConnection } from '../../adapters/mqtt/connection.js'
import { phoneLinks } from '../../adapters/mqtt/phone-link.js'
import { errorText } from '../../core/errors.js'
import { PhoneClient } from '../../phone/client.js'
import { DEFAULT_PREFIX } from '../../protocol/index.js'
import { PhoneKeyStore } from '../phone-keys.js'
import type { ModelSide } from './model-side.js'
import type { RunContext } from './run-context.js'

/** The device's name on the broker, as Anna's phone pairs with it. */
export const DEVICE = 'kitchen'

/** Everything around the appliance: the embedded broker and the model side it talks to. */
export interface House {
  readonly broker: EmbeddedBroker
  readonly model: ModelSide
}

/**
 * The house the appliance runs in: the embedded broker, the model's side (a fake service playing
 * the household scene), the household's devices on the broker, and Anna's paired phone, which
 * approves the door it is asked about.
 */
export async function startHouse(ctx: RunContext, model: ModelSide): Promise<House> {
  const { logger, say, seen } = ctx
  const broker = new EmbeddedBroker({ port: 0, prefix: DEFAULT_PREFIX, logger })
  await broker.start()
  ctx.defer(() => broker.stop())

  // Anna pairs her phone: a key of its own, as `nocturn pair anna "Anna's phone"` would make.
  const anna = new PhoneKeyStore(join(ctx.work, 'phones')).add('anna', "Anna's phone")

  // The household's devices on the broker (zigbee2mqtt would sit here).
  const devices = new MqttConnection({
    url: broker.url,
    clientId: 'household',
    logger,
    clock: realClock(),
  })
  devices.onMessage((topic, payload) => {
    if (topic === 'home/front-door/set') seen.doorUnlocked = true
    if (topic === 'home/garage/set') seen.garageMoved = true
    say('[house]', `${topic} ← ${payload.toString()}`)
  })
  devices.start()
  await devices.ready()
  await devices.subscribe(['home/#'])
  ctx.defer(() => devices.close())

  const phone = new PhoneClient({
    pairing: {
      broker: broker.url,
      device: DEVICE,
      prefix: DEFAULT_PREFIX,
      phone: 'anna',
      key: anna.key,
    },
    link: phoneLinks(realClock()),
    logger,
  })
  phone.on((e) => {
    if (e.kind === 'pending') {
      say('[phone]', `Anna's phone shows: "${e.request.action}"`)
      // She approves the door she was asked about; the garage she leaves (it is withdrawn first),
      // so no machine, however slow, can have her approve it before the withdrawal arrives.
      if (e.request.action !== 'unlock the front door') return
      // A person takes a moment to read it; the conversation carries on meanwhile.
      ctx.later(1500, () => {
        if (!phone.pending().some((r) => r.id === e.request.id)) return
        say('[phone]', `Anna taps Approve on "${e.request.action}"`)
        void phone
          .decide(e.request.id, 'approve', 'once')
          .catch((err: unknown) => say('[phone]', `the approval was not sent: ${errorText(err)}`))
      })
    } else if (e.kind === 'outcome') {
      if (e.outcome.state === 'approved') seen.approvedOnPhone = true
      say('[phone]', `request ${e.outcome.state}`)
    }
  })
  await phone.start()
  ctx.defer(() => phone.close())
  return { broker, model }
}
