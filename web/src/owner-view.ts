import type { App } from './app.js'
import { h } from './dom.js'
import type { SpeakerLink } from './speaker-link.js'

/**
 * On a speaker's card: whether this phone's critical yes needs its owner (docs/phone-app.md,
 * "Critical requests need you"), and the button that registers the phone's fingerprint, face or
 * screen lock with the speaker — offered as soon as the phone is paired and connected.
 */
export function ownerView(app: App, l: SpeakerLink): HTMLElement | null {
  const s = app.owners.of(l)
  // A speaker older than the owner's yes never answers: nothing to offer.
  if (!s) return null
  if (s.registered) {
    return h(
      'p',
      { class: 'owner hint', 'data-owner': 'registered' },
      `A yes to a critical request (a door, an alarm) from this phone needs your fingerprint, face or screen lock.`,
    )
  }
  const without = s.required
    ? 'Until then this phone can deny anything and approve ordinary requests, but not critical ones.'
    : 'Until then one tap on this phone, unlocked, approves a critical request (a door, an alarm).'
  const why = app.owners.whyNot(l)
  if (why) {
    return h(
      'div',
      { class: 'owner', 'data-owner': 'unavailable' },
      h('p', { class: 'hint' }, why),
      h('p', { class: 'hint' }, without),
    )
  }
  const problem = app.owners.problemOf(l)
  const button = h(
    'button',
    {
      class: 'secondary',
      'data-owner-register': '',
      onclick: () => {
        void app.owners.register(l).then((done) => {
          if (done) {
            app.say(
              `Critical requests from ${l.speaker.name} now need your fingerprint, face or screen lock on this phone.`,
            )
          }
        })
      },
    },
    "Protect critical requests with this phone's screen lock",
  )
  return h(
    'div',
    { class: 'owner', 'data-owner': 'unregistered' },
    h(
      'p',
      { class: 'hint' },
      `So that nobody can open the door with this phone lying unlocked on the table, ${l.speaker.name} can ask for your fingerprint, face or screen lock before a critical yes. ${without}`,
    ),
    button,
    problem ? h('p', { class: 'problem', role: 'alert' }, problem) : null,
  )
}
