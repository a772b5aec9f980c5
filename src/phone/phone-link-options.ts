import type { Logger } from '../core/logger.js'
import type { OpenPhoneLink, PhoneLink } from '../ports/phone-link.js'
import type { Pairing } from '../protocol/index.js'
import type { PhoneIdentity } from '../protocol/phone-side.js'

/** What each of the phone's two sides (approvals, conversations) is given to reach the broker. */
export interface PhoneLinkOptions {
  /** How the phone reaches the broker (adapters/mqtt/phone-link.ts; wired by its program). */
  readonly link: OpenPhoneLink
  readonly pairing: Pairing
  readonly username?: string
  readonly password?: string
  readonly ca?: string | Buffer
  readonly logger: Logger
  readonly now?: () => number
}

/** One side of the phone on the broker: its link, who it signs as, and its clock. */
export interface PhoneSide {
  readonly link: PhoneLink
  /** Who this phone is, as the protocol signs and verifies for it. */
  readonly me: PhoneIdentity
  readonly now: () => number
}

/**
 * One side's link to the pairing's broker, with the phone's credentials; `role` tells the two
 * sides' client ids apart (`a` approvals, `c` chats).
 */
export function openPhoneSide(
  o: PhoneLinkOptions,
  side: {
    role: string
    filters: readonly string[]
    onMessage: (topic: string, payload: Buffer) => void
    logger: Logger
  },
): PhoneSide {
  const { device, phone, key } = o.pairing
  const link = o.link({
    broker: o.pairing.broker,
    phone,
    ...(o.username !== undefined && { username: o.username }),
    ...(o.password !== undefined && { password: o.password }),
    ...(o.ca !== undefined && { ca: o.ca }),
    ...side,
  })
  return { link, me: { device, phone, key }, now: o.now ?? Date.now }
}
