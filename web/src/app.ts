import { ActionWords } from './action-words.js'
import { Attention } from './attention.js'
import { OwnerCredentials } from './owner-credential.js'
import { type KeyValueStorage, type Speaker, SpeakerStore, speakerKey } from './pairing.js'
import { type Card, SpeakerLink } from './speaker-link.js'
import { WakeLists } from './wakes-view.js'

export type Tab = 'approvals' | 'chats' | 'history' | 'speakers' | 'grants'

/**
 * The app's state: one SpeakerLink per paired speaker, which tab is open, and a notice line. Views
 * read it and call back; `onChange` re-renders what changed.
 */
export class App {
  readonly links = new Map<string, SpeakerLink>()
  readonly store: SpeakerStore
  readonly attention = new Attention()
  /** The sentences requests used, for screens whose data names only the tool (Grants). */
  readonly actions = new ActionWords()
  /** This phone's owner credential with each speaker, asked for again at every connection. */
  readonly owners = new OwnerCredentials(() => this.#emit('status'))
  /** Each speaker's recent wakes, read when the person opens them on the Speakers screen. */
  readonly wakes = new WakeLists(() => this.#emit('status'))
  tab: Tab = 'approvals'
  /** A sentence for the person (a problem to fix, or what just happened). */
  notice: { text: string; kind: 'problem' | 'info' } | undefined
  #listeners: Array<(what: string) => void> = []
  #seen = new Set<string>()

  constructor(storage: KeyValueStorage) {
    this.store = new SpeakerStore(storage)
  }

  start(): void {
    for (const s of this.store.load()) this.#open(s)
    this.attention.unlockOnFirstTap()
    setInterval(() => {
      let changed = false
      for (const l of this.links.values()) changed = l.expireDue() || changed
      if (changed) this.#emit('cards')
      this.#emit('tick')
    }, 1000)
  }

  onChange(listener: (what: string) => void): void {
    this.#listeners.push(listener)
  }

  setTab(tab: Tab): void {
    this.tab = tab
    this.#emit('tab')
  }

  say(text: string, kind: 'problem' | 'info' = 'info'): void {
    const notice = { text, kind }
    this.notice = notice
    this.#emit('notice')
    // Good news fades by itself; a problem stays until it is dismissed or replaced.
    if (kind === 'info') {
      setTimeout(() => {
        if (this.notice !== notice) return
        this.notice = undefined
        this.#emit('notice')
      }, 6000)
    }
  }

  /** Takes the notice away, on screen too: it was about something the person is fixing now. */
  quiet(): void {
    if (!this.notice) return
    this.notice = undefined
    this.#emit('notice')
  }

  /** Adds (or re-pairs) a speaker; everything already paired stays as it was. */
  pair(speaker: Speaker): void {
    this.store.save(speaker)
    this.links.get(speakerKey(speaker))?.close()
    this.#open(speaker)
    this.#emit('speakers')
  }

  unpair(id: string): void {
    this.links.get(id)?.close()
    this.links.delete(id)
    this.store.remove(id)
    this.#emit('speakers')
  }

  /** Every card, pending first, newest first. */
  cards(): Array<{ card: Card; link: SpeakerLink }> {
    const all = [...this.links.values()].flatMap((link) =>
      [...link.cards.values()].map((card) => ({ card, link })),
    )
    return all.sort(
      (a, b) =>
        Number(!!a.card.ended) - Number(!!b.card.ended) ||
        b.card.request.createdAt - a.card.request.createdAt,
    )
  }

  pendingCount(): number {
    return [...this.links.values()].reduce((n, l) => n + l.pending().length, 0)
  }

  #open(speaker: Speaker): void {
    const link = new SpeakerLink(speaker, (what, l) => this.#linkChanged(what, l))
    this.links.set(link.id, link)
    link.connect()
  }

  #linkChanged(what: string, link: SpeakerLink): void {
    if (what === 'link' && link.connected) this.owners.refresh(link)
    if (what === 'cards') {
      for (const { request: r } of link.cards.values()) {
        this.actions.learn(link.id, r.tool, r.args, r.action)
      }
      for (const c of link.pending()) {
        const k = `${link.id}:${c.request.id}`
        if (this.#seen.has(k)) continue
        this.#seen.add(k)
        this.attention.newRequest(c.request.action, link.speaker.name)
      }
      this.attention.count(this.pendingCount())
    }
    this.#emit(what)
  }

  #emit(what: string): void {
    for (const l of this.#listeners) l(what)
  }
}
