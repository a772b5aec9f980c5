import { fromBase64url, newNonce } from '../../src/protocol/phone-crypto.js'
import { phoneRequestMessage } from '../../src/protocol/phone-side.js'
import { topicsFor } from '../../src/protocol/topics.js'
import type { App } from './app.js'
import { syncWorkerSpeakers } from './key-store.js'
import { type Speaker, speakerKey } from './pairing.js'
import { identityOf } from './push-notice.js'
import type { SpeakerLink } from './speaker-link.js'
import { publishOnce } from './worker-delivery.js'

/**
 * Lock-screen approvals (docs/phone-app.md, "When the app is closed"): for each paired speaker,
 * once notifications are allowed on a secure page, the app asks the speaker for its VAPID key
 * (`push_key`), subscribes through the browser's push service and registers the subscription
 * (`push_subscribe`). Each speaker has its own key, and a browser holds one push subscription per
 * service worker registration, so each speaker gets a registration of the one worker script under
 * a scope of its own (`push/<pairing>/`); no page lives there, it only receives that speaker's
 * pushes. Forgetting a speaker sends `push_unsubscribe` and removes its registration.
 */
export class PushSubscriptions {
  readonly #app: App
  /** Pairings subscribed (or being subscribed) during this page's life. */
  readonly #done = new Set<string>()
  #syncing: Promise<void> = Promise.resolve()

  constructor(app: App) {
    this.#app = app
  }

  /** Whether this page can have lock-screen approvals at all (HTTPS, or loopback). */
  static possible(): boolean {
    return window.isSecureContext && 'serviceWorker' in navigator && 'PushManager' in window
  }

  start(): void {
    if (!PushSubscriptions.possible()) return
    this.#sync()
    this.#app.onChange((what) => {
      if (what === 'speakers') this.#sync()
      if (what === 'link') this.subscribeAll()
    })
  }

  /** After notifications were allowed, and whenever a speaker connects. */
  subscribeAll(): void {
    if (!PushSubscriptions.possible() || Notification.permission !== 'granted') return
    for (const link of this.#app.links.values()) {
      if (!link.connected || this.#done.has(link.id)) continue
      this.#done.add(link.id)
      void this.#subscribe(link).catch(() => {
        // Tried again at the next connection or page load; the app works without it.
        this.#done.delete(link.id)
      })
    }
  }

  /** The worker's copy of the pairings follows the page's; a forgotten speaker is unsubscribed. */
  #sync(): void {
    const paired = this.#app.store.load()
    this.#syncing = this.#syncing
      .then(async () => {
        const gone = await syncWorkerSpeakers(paired)
        for (const s of gone) await forget(s).catch(() => {})
      })
      .catch(() => {})
  }

  async #subscribe(link: SpeakerLink): Promise<void> {
    await this.#syncing
    const { vapidKey } = (await link.call('push_key', {}).done) as { vapidKey?: unknown }
    const key = typeof vapidKey === 'string' ? fromBase64url(vapidKey) : undefined
    if (key?.length !== 65) throw new Error('the speaker sent no VAPID key')
    const reg = await registrationFor(link.speaker)
    let sub = await reg.pushManager.getSubscription()
    // The speaker has a new key pair: the old subscription can no longer carry its pushes.
    if (sub && !sameBytes(sub.options.applicationServerKey, key)) {
      await sub.unsubscribe()
      sub = null
    }
    sub ??= await reg.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: new Uint8Array(key),
    })
    await link.call('push_subscribe', sub.toJSON() as Record<string, unknown>).done
  }
}

/** `push/<base64url of the pairing's key>/`: a scope per pairing, under the worker's own path. */
function scopeOf(s: Speaker): string {
  let bin = ''
  for (const b of new TextEncoder().encode(speakerKey(s))) bin += String.fromCharCode(b)
  const id = btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
  return new URL(`push/${id}/`, document.baseURI).href
}

async function registrationFor(s: Speaker): Promise<ServiceWorkerRegistration> {
  const reg = await navigator.serviceWorker.register('sw.js', { scope: scopeOf(s) })
  if (reg.active) return reg
  const worker = reg.installing ?? reg.waiting
  await new Promise<void>((resolve) => {
    if (!worker) return resolve()
    worker.addEventListener('statechange', () => {
      if (worker.state === 'activated' || worker.state === 'redundant') resolve()
    })
  })
  return reg
}

/**
 * A forgotten speaker: its subscription taken back from the speaker (signed with the key that is
 * being forgotten, sent once over the broker), then from the browser's push service, then its
 * registration removed. Should the speaker not hear it, its next push is refused by the push
 * service (410) and the speaker deletes the subscription itself.
 */
async function forget(s: Speaker): Promise<void> {
  const reg = await navigator.serviceWorker.getRegistration(scopeOf(s))
  if (!reg || reg.scope !== scopeOf(s)) return
  const sub = await reg.pushManager.getSubscription()
  if (sub) {
    const msg = phoneRequestMessage(
      identityOf(s),
      `app-unsub-${newNonce().slice(0, 12)}`,
      'push_unsubscribe',
      { endpoint: sub.endpoint },
      Date.now(),
    )
    await publishOnce(
      s,
      topicsFor(s.prefix, s.device).conversationRequest(s.phone),
      JSON.stringify(msg),
    ).catch(() => {})
    await sub.unsubscribe().catch(() => false)
  }
  await reg.unregister()
}

function sameBytes(a: ArrayBuffer | null, b: Uint8Array): boolean {
  if (!a || a.byteLength !== b.length) return false
  const x = new Uint8Array(a)
  return x.every((v, i) => v === b[i])
}
