import type { GrantForm } from '../../src/protocol/forms.js'
import type { App } from './app.js'
import { h, replace, secondsLeft } from './dom.js'
import { saidView } from './said-view.js'
import type { Card, SpeakerLink } from './speaker-link.js'
import { argLines, grantWords, phoneName, sentence } from './words.js'

type Choice = 'once' | 'session' | 'hour'

/**
 * The Approvals screen: pending requests, verified, newest first; an ended one stays a minute saying
 * how it ended. The grant a person picked survives re-renders (a new request must not reset it).
 */
export class ApprovalsView {
  readonly #app: App
  readonly #choices = new Map<string, Choice>()

  constructor(app: App) {
    this.#app = app
  }

  render(root: HTMLElement): void {
    const app = this.#app
    const cards = app.cards()
    if (app.links.size === 0) {
      replace(root, h('p', { class: 'empty' }, 'No speaker paired yet. Open Speakers to pair one.'))
      return
    }
    // "Nothing to approve" is said only when every speaker can be heard: a phone that is not
    // connected cannot know what is waiting.
    const unheard = [...app.links.values()].filter((l) => !l.connected)
    if (cards.length === 0) {
      replace(
        root,
        unheard.length > 0
          ? h(
              'p',
              { class: 'empty unheard', 'data-unheard': unheard.length },
              `Not connected to ${names(unheard)}, so this phone cannot see what ${unheard.length > 1 ? 'they are' : 'it is'} asking. Requests appear here once connected.`,
            )
          : h('p', { class: 'empty' }, 'Nothing to approve. Requests appear here at once.'),
      )
      return
    }
    const focus = focusIn(root)
    const finished = cards.filter((c) => c.card.ended).length
    replace(
      root,
      h('ul', { class: 'cards', 'aria-label': 'Requests' }, ...cards.map((c) => this.#card(c))),
      // Finished cards leave by themselves a minute after their ending; this clears them now.
      finished > 0
        ? h(
            'button',
            {
              class: 'secondary',
              'data-clear-finished': '',
              onclick: () => {
                for (const l of app.links.values()) l.clearEnded()
              },
            },
            finished === 1
              ? 'Clear the finished request'
              : `Clear the ${finished} finished requests`,
          )
        : null,
    )
    focus?.restore(root)
  }

  /** Keeps countdowns moving without rebuilding the cards (a choice being made stays made). */
  tick(root: HTMLElement): void {
    const now = Date.now()
    for (const el of root.querySelectorAll<HTMLElement>('[data-expires]')) {
      el.textContent = secondsLeft(Number(el.dataset.expires), now)
    }
  }

  #card({ card, link }: { card: Card; link: SpeakerLink }): HTMLElement {
    const r = card.request
    const key = `${link.id}:${r.id}`
    const ended = card.ended
    const state = ended ? ended.state : card.sent ? 'sent' : 'pending'
    const args = argLines(r.args)
    return h(
      'li',
      { class: `card ${state}`, 'data-card': r.id, 'data-state': state },
      h('p', { class: 'speaker-name' }, `${link.speaker.name} · ${askedText(card, link)}`),
      h('h2', { class: 'action' }, sentence(r.action)),
      saidView(r, link.speaker.phone),
      args.length > 0 ? h('ul', { class: 'args' }, ...args.map((a) => h('li', {}, a))) : null,
      r.critical && !ended
        ? h(
            'p',
            { class: 'critical' },
            this.#app.owners.of(link)?.registered
              ? 'Asks every time, and for your fingerprint, face or screen lock'
              : 'Asks every time',
          )
        : null,
      ended ? endingView(card, link) : this.#pendingView(card, link, key),
      h(
        'details',
        { class: 'details' },
        h('summary', {}, 'Details'),
        h(
          'dl',
          {},
          h('dt', {}, 'Tool'),
          h('dd', {}, h('code', {}, r.tool)),
          h('dt', {}, 'Arguments'),
          h('dd', {}, h('code', {}, JSON.stringify(r.args ?? {}))),
          h('dt', {}, 'Request'),
          h('dd', {}, h('code', {}, r.id)),
        ),
      ),
    )
  }

  #pendingView(card: Card, link: SpeakerLink, key: string): HTMLElement {
    const r = card.request
    const choice = this.#choices.get(key) ?? 'once'
    const disabled = !!card.sent
    const grantChoices: Array<[Choice, string]> = r.critical
      ? [['once', 'Just this once']]
      : [
          ['once', 'Just this once'],
          ['session', 'For this conversation'],
          ['hour', 'For one hour'],
        ]
    const grantOf = (c: Choice): GrantForm =>
      c === 'hour' ? { until: Date.now() + 3_600_000 } : c === 'session' ? 'session' : 'once'
    const decide = (d: 'approve' | 'deny') => () => {
      // A critical yes carries the owner's fingerprint, face or screen lock; a no never needs it.
      if (d === 'approve' && r.critical) void this.#criticalYes(card, link)
      else
        link.decide(r.id, d, d === 'approve' ? grantOf(this.#choices.get(key) ?? 'once') : 'once')
    }
    return h(
      'div',
      { class: 'pending-part' },
      h(
        'p',
        { class: 'countdown' },
        h('span', { 'data-expires': r.expiresAt }, secondsLeft(r.expiresAt, Date.now())),
        ' left',
      ),
      card.sent ? deliveryView(card, link) : null,
      card.problem ? h('p', { class: 'problem', role: 'alert' }, card.problem) : null,
      h(
        'fieldset',
        { class: 'grant', disabled },
        h('legend', {}, 'If approved'),
        ...grantChoices.map(([c, label]) =>
          h(
            'label',
            {},
            h('input', {
              type: 'radio',
              name: `grant-${key}`,
              value: c,
              checked: c === choice,
              disabled,
              onchange: () => this.#choices.set(key, c),
            }),
            ` ${label}`,
          ),
        ),
      ),
      h(
        'div',
        { class: 'buttons' },
        h(
          'button',
          { class: 'deny', disabled, 'aria-label': `Deny: ${r.action}`, onclick: decide('deny') },
          'Deny',
        ),
        h(
          'button',
          {
            class: 'approve',
            disabled,
            'aria-label': `Approve: ${r.action}`,
            onclick: decide('approve'),
          },
          'Approve',
        ),
      ),
    )
  }

  async #criticalYes(card: Card, link: SpeakerLink): Promise<void> {
    const r = card.request
    const yes = await this.#app.owners.yes(link, r.digest)
    if ('problem' in yes) link.sayOnCard(r.id, yes.problem)
    else link.decide(r.id, 'approve', 'once', yes.owner)
  }
}

function askedText(card: Card, link: SpeakerLink): string {
  const r = card.request
  if (r.channel === 'voice') return 'asked by voice in the room'
  return r.askedBy ? `typed on ${phoneName(r.askedBy, link.speaker.phone)}` : 'typed on a phone'
}

/** Where this phone's answer is: held until it reconnects, on its way, or with the speaker. */
function deliveryView(card: Card, link: SpeakerLink): HTMLElement {
  const what = card.sent === 'approve' ? 'yes' : 'no'
  if (card.delivery === 'queued') {
    return h(
      'p',
      { class: 'queued', role: 'status', 'data-delivery': 'queued' },
      `Not sent yet: this phone is not connected to ${link.speaker.name}. Your ${what} goes out when it reconnects.`,
    )
  }
  return h(
    'p',
    { class: 'sent', role: 'status', 'data-delivery': card.delivery ?? 'sending' },
    card.delivery === 'delivered'
      ? `Your ${what} was sent. Waiting for ${link.speaker.name}…`
      : `Sending your ${what}…`,
  )
}

/** How it ended, who answered, what was remembered, and what became of this phone's own answer. */
function endingView(card: Card, link: SpeakerLink): HTMLElement {
  const ended = card.ended
  const me = link.speaker.phone
  const by = ended && 'by' in ended ? ended.by : undefined
  const lines: string[] = []
  if (ended?.state === 'approved' || ended?.state === 'denied') {
    const verb = ended.state === 'approved' ? 'approved' : 'denied'
    lines.push(by === me ? `You ${verb} this.` : `${sentence(verb)} on ${phoneName(by ?? '', me)}.`)
    if (ended.state === 'approved') {
      lines.push(grantWords('grant' in ended ? ended.grant : undefined, card.request.critical))
    }
    if (card.sent && by !== me) lines.push('Your answer was not needed: they answered first.')
  } else if (ended?.state === 'withdrawn') {
    lines.push('Withdrawn: the speaker no longer needs an answer.')
  } else {
    lines.push('Expired: nobody answered in time.')
    if (card.sent && card.delivery === 'queued') {
      lines.push(
        `Your answer never reached ${link.speaker.name}: this phone was not connected before the time ran out.`,
      )
    } else if (card.sent) lines.push('Your answer arrived too late.')
  }
  const mark = ended?.state === 'approved' ? '✓' : ended?.state === 'denied' ? '✕' : '–'
  return h(
    'div',
    { class: `ending ${ended?.state ?? ''}`, role: 'status' },
    h('span', { class: 'mark', 'aria-hidden': 'true' }, mark),
    h('div', {}, ...lines.map((l, i) => h('p', { class: i === 0 ? 'ended' : 'ended-more' }, l))),
  )
}

function names(links: SpeakerLink[]): string {
  const n = links.map((l) => l.speaker.name)
  return n.length > 1 ? `${n.slice(0, -1).join(', ')} and ${n.at(-1)}` : (n[0] ?? '')
}

/**
 * What has the focus inside a card (the card itself, brought there by a link or a notification,
 * or one of its buttons): a status or a new request re-renders the list, and the focus must
 * stay where the person, or their screen reader, left it.
 */
function focusIn(root: HTMLElement): { restore(root: HTMLElement): void } | undefined {
  const active = document.activeElement
  if (!(active instanceof HTMLElement) || !root.contains(active)) return undefined
  const card = active.closest<HTMLElement>('[data-card]')
  const id = card?.dataset.card
  if (!card || id === undefined) return undefined
  const label = active === card ? undefined : active.textContent
  return {
    restore(next) {
      const again = [...next.querySelectorAll<HTMLElement>('[data-card]')].find(
        (el) => el.dataset.card === id,
      )
      if (!again) return
      const button =
        label === undefined
          ? undefined
          : [...again.querySelectorAll<HTMLElement>('button')].find((b) => b.textContent === label)
      if (button) return button.focus({ preventScroll: true })
      again.tabIndex = -1
      again.focus({ preventScroll: true })
    },
  }
}
