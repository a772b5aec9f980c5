import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { EmbeddedBroker } from '../../adapters/aedes/broker.js'
import { realClock } from '../../adapters/clock/real-clock.js'
import { phoneLinks } from '../../adapters/mqtt/phone-link.js'
import { errorText } from '../../core/errors.js'
import { PhoneClient } from '../../phone/client.js'
import { DEFAULT_PREFIX } from '../../protocol/index.js'
import { FakeHomeAssistant } from '../../testing/fake-home-assistant/server.js'
import { PhoneKeyStore } from '../phone-keys.js'
import type { ModelSide } from './model-side.js'
import type { RunContext } from './run-context.js'

/** The device's name on the broker, as Anna's phone pairs with it. */
export const DEVICE = 'kitchen'

/** What Anna's phone shows for the front door, the one request she approves. */
export const DOOR_CARD = 'Unlock Front Door — Hall'

/** Everything around the appliance: the embedded broker, Home Assistant, the model side. */
export interface House {
  readonly broker: EmbeddedBroker
  readonly model: ModelSide
  /** The stand-in Home Assistant on loopback, its lights, locks and garage door. */
  readonly ha: FakeHomeAssistant
  /** The long-lived token it accepts: the appliance reads it from its environment, as in production. */
  readonly haToken: string
}

/**
 * The house the appliance runs in: the embedded broker, the model's side (a fake service playing
 * the household scene), the household's devices in a stand-in Home Assistant, and Anna's paired
 * phone, which approves the door it is asked about.
 */
export async function startHouse(ctx: RunContext, model: ModelSide): Promise<House> {
  const { logger, say, seen } = ctx
  const broker = new EmbeddedBroker({ port: 0, prefix: DEFAULT_PREFIX, logger })
  await broker.start()
  ctx.defer(() => broker.stop())

  // Anna pairs her phone: a key of its own, as `nocturn pair anna "Anna's phone"` would make.
  const anna = new PhoneKeyStore(join(ctx.work, 'phones')).add('anna', "Anna's phone")

  // The household's devices in Home Assistant; a fresh token each run, never printed.
  const haToken = randomBytes(24).toString('base64url')
  const ha = await FakeHomeAssistant.start({ token: haToken })
  ctx.defer(() => ha.stop())
  let called = 0
  ha.house.onChange((c) => {
    // The service call that made this change, said once, before the state it made.
    for (; called < ha.house.calls.length; called++) {
      const call = ha.house.calls[called]
      if (call)
        say(
          '[house]',
          `Home Assistant runs ${call.domain}.${call.service} on ${call.entityIds.join(', ')}`,
        )
    }
    if (c.entityId === 'light.kitchen' && c.newState === 'on') seen.lightOn = true
    if (c.entityId === 'lock.front_door' && c.newState === 'unlocked') {
      seen.doorUnlocked = true
      seen.doorBeforeYes ||= !seen.annaTapped
    }
    if (c.entityId === 'cover.garage_door') seen.garageMoved = true
    say('[house]', `${c.entityId}: ${c.oldState} → ${c.newState}`)
  })

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
      seen.phoneAsked.push(e.request.action)
      // She approves the door she was asked about; the garage she leaves (it is withdrawn first),
      // so no machine, however slow, can have her approve it before the withdrawal arrives.
      if (e.request.action !== DOOR_CARD) return
      // A person takes a moment to read it; the conversation carries on meanwhile.
      ctx.later(1500, () => {
        if (!phone.pending().some((r) => r.id === e.request.id)) return
        say('[phone]', `Anna taps Approve on "${e.request.action}"`)
        seen.annaTapped = true
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
  return { broker, model, ha, haToken }
}
