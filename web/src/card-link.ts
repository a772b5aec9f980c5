import { ID_PATTERN } from '../../src/protocol/topics.js'
import type { App } from './app.js'

/**
 * An alert's link to one request (ntfy, Home Assistant: docs/phone-app.md, "Links to a card"):
 * `#card=<approval id>&device=<device id>` after the app's address. The alert carries no
 * authority, so the link only says where to look; the card itself is verified as always.
 */
interface CardWanted {
  readonly id: string
  readonly device: string
}

/** A connected speaker sends its waiting requests at once (they are retained): after this, gone. */
const GONE_AFTER_MS = 3000

export function parseCardLink(hash: string): CardWanted | undefined {
  if (!hash.startsWith('#card=')) return undefined
  const params = new URLSearchParams(hash.slice(1))
  const id = params.get('card') ?? ''
  const device = params.get('device') ?? ''
  return ID_PATTERN.test(id) && ID_PATTERN.test(device) ? { id, device } : undefined
}

/** Brings the linked card into view once it is shown, or says that it is no longer waiting. */
export class CardLink {
  readonly #app: App
  #wanted: CardWanted | undefined
  #connectedAt: number | undefined

  constructor(app: App) {
    this.#app = app
  }

  want(wanted: CardWanted): void {
    this.#wanted = wanted
    this.#connectedAt = undefined
  }

  /** After every render and every second's tick, while a card is wanted. */
  show(view: HTMLElement, now = Date.now()): void {
    const w = this.#wanted
    if (!w) return
    const link = [...this.#app.links.values()].find((l) => l.speaker.device === w.device)
    if (!link) {
      this.#wanted = undefined
      this.#app.say(
        `That link is for a speaker this phone is not paired with ("${w.device}").`,
        'problem',
      )
      return
    }
    const card = view.querySelector(`[data-card="${w.id}"]`)
    if (card instanceof HTMLElement) {
      this.#wanted = undefined
      card.tabIndex = -1
      card.scrollIntoView({ block: 'center' })
      card.focus()
      return
    }
    if (!link.connected) return
    this.#connectedAt ??= now
    if (now - this.#connectedAt < GONE_AFTER_MS) return
    this.#wanted = undefined
    this.#app.say(
      `That request from ${link.speaker.name} is no longer waiting: it was answered, withdrawn or ran out of time. History shows what became of it.`,
    )
  }
}
