import type { GrantForm } from '../../src/protocol/forms.js'
import type { App } from './app.js'
import { h, replace, secondsLeft } from './dom.js'
import type { Card, SpeakerLink } from './speaker-link.js'

type Choice = 'once' | 'session' | 'hour'
const choices = new Map<string, Choice>()

const ENDED_TEXT: Record<string, (by?: string) => string> = {
  approved: (by) => `Approved${by ? ` on ${by}'s phone` : ''}`,
  denied: (by) => `Denied${by ? ` on ${by}'s phone` : ''}`,
  withdrawn: () => 'Withdrawn: the speaker no longer needs an answer',
  expired: () => 'Expired: nobody answered in time',
}

/** The pending requests, verified, newest first; ended ones stay a minute with how they ended. */
export function renderApprovals(root: HTMLElement, app: App): void {
  const cards = app.cards()
  if (app.links.size === 0) {
    replace(root, h('p', { class: 'empty' }, 'No speaker paired yet. Open Speakers to pair one.'))
    return
  }
  if (cards.length === 0) {
    replace(root, h('p', { class: 'empty' }, 'Nothing to approve. Requests appear here at once.'))
    return
  }
  replace(
    root,
    h('ul', { class: 'cards', 'aria-label': 'Requests' }, ...cards.map((c) => cardView(app, c))),
  )
}

function cardView(_app: App, { card, link }: { card: Card; link: SpeakerLink }): HTMLElement {
  const r = card.request
  const key = `${link.id}:${r.id}`
  const ended = card.ended
  const choice = choices.get(key) ?? 'once'
  const who =
    r.channel === 'voice'
      ? 'spoken in the room'
      : r.askedBy
        ? `typed on ${r.askedBy}'s phone`
        : 'typed on a phone'
  const state = ended ? ended.state : card.sent ? 'sent' : 'pending'
  const grantChoices: Array<[Choice, string]> = r.critical
    ? [['once', 'Just this once']]
    : [
        ['once', 'Just this once'],
        ['session', 'For this conversation'],
        ['hour', 'For one hour'],
      ]
  const disabled = !!ended || !!card.sent
  const grantOf = (c: Choice): GrantForm =>
    c === 'hour' ? { until: Date.now() + 3_600_000 } : c === 'session' ? 'session' : 'once'
  const decide = (d: 'approve' | 'deny') => () =>
    link.decide(r.id, d, d === 'approve' ? grantOf(choices.get(key) ?? 'once') : 'once')
  return h(
    'li',
    { class: `card ${state}`, 'data-card': r.id, 'data-state': state, 'aria-label': r.action },
    h('p', { class: 'speaker-name' }, `${link.speaker.name} · ${who}`),
    h('h2', { class: 'action' }, sentence(r.action)),
    h(
      'p',
      { class: 'tool' },
      h('code', {}, r.tool),
      ' ',
      h('code', { class: 'args' }, argsText(r.args)),
      r.critical ? h('span', { class: 'critical' }, ' Asks every time') : null,
    ),
    ended
      ? h(
          'p',
          { class: 'ended', role: 'status' },
          (ENDED_TEXT[ended.state] ?? (() => ended.state))('by' in ended ? ended.by : undefined),
        )
      : h(
          'p',
          { class: 'countdown' },
          h('span', { 'data-expires': r.expiresAt }, secondsLeft(r.expiresAt, Date.now())),
          ' left',
        ),
    card.sent && !ended
      ? h('p', { class: 'sent', role: 'status' }, 'Sent. Waiting for the speaker…')
      : null,
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
            onchange: () => choices.set(key, c),
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

/** Keeps countdowns moving without rebuilding the cards (a choice being made stays made). */
export function tickCountdowns(root: HTMLElement): void {
  const now = Date.now()
  for (const el of root.querySelectorAll<HTMLElement>('[data-expires]')) {
    el.textContent = secondsLeft(Number(el.dataset.expires), now)
  }
}

function sentence(action: string): string {
  return `${action.charAt(0).toUpperCase()}${action.slice(1)}`
}

function argsText(args: unknown): string {
  if (args === null || typeof args !== 'object') return JSON.stringify(args ?? {})
  const entries = Object.entries(args as Record<string, unknown>)
  if (entries.length === 0) return '(no arguments)'
  return entries
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ')
}
