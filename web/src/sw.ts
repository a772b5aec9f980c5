/// <reference lib="webworker" />
import { decisionMessage } from '../../src/protocol/phone-side.js'
import { topicsFor } from '../../src/protocol/topics.js'
import { workerSpeakers } from './key-store.js'
import { speakerKey } from './pairing.js'
import {
  endedNotice,
  identityOf,
  type Notice,
  type NoticeData,
  noticeTag,
  openNotice,
  readPush,
  requestNotice,
  sendingNotice,
  unsentNotice,
  verifyEnding,
} from './push-notice.js'
import { publishOnce } from './worker-delivery.js'

/**
 * The phone app's service worker (docs/phone-app.md, "When the app is closed"). It caches
 * nothing, so the app always comes from the speaker as it is now. A push is shown only once its
 * request verified with this phone's key (push-notice.ts, through the app's own phone side); an
 * Approve or Deny tapped on an ordinary tool's notification is signed here and sent to the broker
 * as the page would; a critical tool's notification only opens the app at its card.
 */
declare const self: ServiceWorkerGlobalScope

self.addEventListener('install', () => void self.skipWaiting())
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()))

self.addEventListener('push', (event) => {
  const data = event.data ? new Uint8Array(event.data.arrayBuffer()) : new Uint8Array()
  keepAlive(event, onPush(data))
})

self.addEventListener('notificationclick', (event) => {
  keepAlive(event, onClick(event.notification, event.action))
})

/**
 * A click dispatched by a test is script-made, and such an event refuses waitUntil; the work runs
 * either way, and for the browser's own events the worker is kept alive until it is done.
 */
function keepAlive(event: ExtendableEvent, work: Promise<void>): void {
  const done = work.catch(() => {})
  if (event.isTrusted) event.waitUntil(done)
}

/**
 * Chromium keeps its list of a worker's notices in step with what the screen shows, and a listing
 * made while a notice is being shown can drop that notice from the list (seen in the push tests:
 * shown, then not listed). An unlisted notice is one its ending cannot find and replace, so it is
 * shown again, under the same tag: on a screen that already has it, it is replaced without a
 * second alert.
 */
async function show(n: Notice): Promise<void> {
  const tag = n.options.tag
  for (let attempt = 0; attempt < 3; attempt++) {
    await self.registration.showNotification(n.title, n.options)
    if (tag === undefined || (await self.registration.getNotifications({ tag })).length > 0) return
  }
}

async function onPush(data: Uint8Array): Promise<void> {
  const speakers = await workerSpeakers()
  const r = readPush(data, speakers, Date.now())
  if (r.kind === 'drop') return
  if (r.kind === 'open') {
    await show(openNotice(r.speaker, r.id))
    return
  }
  if (r.kind === 'request') {
    const tag = noticeTag(r.speaker, r.request.id)
    // The same request again (the speaker re-published it): the notice already up stays.
    const up = await self.registration.getNotifications({ tag })
    if (up.some((n) => (n.data as NoticeData | undefined)?.digest === r.request.digest)) return
    await show(requestNotice(r.speaker, r.request))
    return
  }
  for (const n of await self.registration.getNotifications({ tag: noticeTag(r.speaker, r.id) })) {
    const shown = n.data as NoticeData | undefined
    if (!shown || shown.phase === 'ended') continue
    if (shown.digest === undefined) {
      // An `open` notice verified nothing and offers nothing to answer: any ending retires it.
      n.close()
      continue
    }
    const outcome = verifyEnding(r.speaker, shown, r.message)
    if (outcome) await show(endedNotice(r.speaker, shown, n.title, outcome))
  }
}

async function onClick(n: Notification, action: string): Promise<void> {
  const shown = n.data as NoticeData | undefined
  n.close()
  if (shown?.v !== 1) return openApp('./')
  const answer = action === 'approve' || action === 'deny' ? action : undefined
  const late = shown.expiresAt !== undefined && Date.now() >= shown.expiresAt
  if (!answer || late || shown.critical || shown.phase !== 'asking' || shown.digest === undefined) {
    return openApp(shown.link)
  }
  const speaker = (await workerSpeakers()).find((s) => speakerKey(s) === shown.speaker)
  if (!speaker) return openApp(shown.link)
  await show(sendingNotice(speaker, shown, n.title, answer === 'approve'))
  // Signed here with this phone's key, exactly as the card signs it: just this once.
  const msg = decisionMessage(
    identityOf(speaker),
    { id: shown.id, digest: shown.digest },
    answer,
    'once',
    Date.now(),
  )
  const topic = topicsFor(speaker.prefix, speaker.device).decision(shown.id)
  try {
    await publishOnce(speaker, topic, JSON.stringify(msg))
  } catch {
    await show(unsentNotice(speaker, shown, n.title))
  }
}

/** Focuses an open app and points it at the card, or opens the app there. */
async function openApp(link: string): Promise<void> {
  const url = new URL(link, self.location.href).href
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true })
  const open = windows[0]
  if (!open) {
    await self.clients.openWindow(url)
    return
  }
  // The app takes a card link from its fragment (card-link.ts); it listens for this message.
  const hash = new URL(url).hash
  if (hash) open.postMessage({ type: 'nocturn-open', hash })
  // Only a person's tap may bring a window forward; without one the app still has the card.
  await open.focus().catch(() => undefined)
}
