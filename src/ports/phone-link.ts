import type { Logger } from '../core/logger.js'
import type { PublishOptions } from './publisher.js'

/**
 * PhoneLink: a phone's own connection to the household's broker (the terminal phone, the phones
 * the tests and benchmarks play), subscribed to its filters again at every (re)connect, each
 * message handed on. `ready` resolves after the first subscription, so nothing is missed after start.
 */
export interface PhoneLink {
  readonly ready: Promise<void>
  start(): void
  publish(topic: string, payload: string, opts: PublishOptions): Promise<void>
  close(): Promise<void>
}

interface PhoneLinkRequest {
  readonly broker: string
  /** Part of the client id: the phone's id and what this link is for (`a` approvals, `c` chats). */
  readonly phone: string
  readonly role: string
  readonly username?: string
  readonly password?: string
  readonly ca?: string | Buffer
  readonly filters: readonly string[]
  readonly onMessage: (topic: string, payload: Buffer) => void
  readonly logger: Logger
}

/** Opens a link (not yet started). */
export type OpenPhoneLink = (request: PhoneLinkRequest) => PhoneLink
