import { z } from 'zod'
import { parsePayload } from '../../protocol/index.js'

/** The fields of another device's retained status that say whether it may claim a wake. */
const presenceSchema = z.object({
  online: z.boolean(),
  muted: z.boolean().nullable(),
  /** Present only while the device listens for a wake word (docs/protocol.md, "Status"). */
  sensitivity: z.string().optional(),
})

/**
 * Which other speakers of the household could claim a wake now, from their retained statuses on
 * `<prefix>/<device>/status`: online, listening for a wake word, and not muted (a muted speaker's
 * wake stage hears nothing). A device that vanishes is marked offline by its last will.
 */
export class HouseholdPresence {
  readonly #prefix: string
  readonly #self: string
  readonly #rivals = new Set<string>()
  /** False until the statuses are read on this connection, or when the broker refuses them. */
  #known = false

  constructor(prefix: string, self: string) {
    this.#prefix = prefix
    this.#self = self
  }

  /** The subscription that brings every device's status. */
  get filter(): string {
    return `${this.#prefix}/+/status`
  }

  /** True when it is known that no other speaker could claim: a wake needs no wait. */
  get alone(): boolean {
    return this.#known && this.#rivals.size === 0
  }

  get rivals(): number {
    return this.#rivals.size
  }

  /** A (re)connection: nothing is known until the retained statuses have been read again. */
  forget(): void {
    this.#known = false
    this.#rivals.clear()
  }

  /** The retained statuses of the subscription have all been delivered. */
  read(): void {
    this.#known = true
  }

  /** A message on some topic; returns true when it was a status (another device's or ours). */
  receive(topic: string, payload: Buffer): boolean {
    const head = `${this.#prefix}/`
    if (!topic.startsWith(head) || !topic.endsWith('/status')) return false
    const device = topic.slice(head.length, -'/status'.length)
    if (device.includes('/')) return false
    if (device === this.#self) return true
    const status = payload.byteLength === 0 ? undefined : parsePayload(presenceSchema, payload)
    // Cleared, unreadable or offline: it will not claim (an unreadable status is the phones' to report).
    if (
      status?.ok &&
      status.value.online &&
      status.value.muted !== true &&
      status.value.sensitivity
    )
      this.#rivals.add(device)
    else this.#rivals.delete(device)
    return true
  }
}
