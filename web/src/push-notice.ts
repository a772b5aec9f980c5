import { fromBase64url } from '../../src/protocol/phone-crypto.js'
import {
  type PhoneIdentity,
  parseJsonObject,
  type VerifiedOutcome,
  type VerifiedRequest,
  verifyOutcome,
  verifyRequest,
} from '../../src/protocol/phone-side.js'
import { isId, parseApprovalTopic, topicsFor } from '../../src/protocol/topics.js'
import { type Speaker, speakerKey } from './pairing.js'
import { argLines, phoneName, sentence } from './words.js'

/**
 * What the service worker makes of one push (docs/protocol.md, "What a push holds"): the envelope
 * names the device and the broker topic, and carries the broker's message as it was published.
 * The message is believed only through src/protocol/phone-side.ts, the very checks the app runs on
 * what it reads from the broker; a push that fails any of them shows nothing.
 */
export type PushReading =
  | { readonly kind: 'request'; readonly speaker: Speaker; readonly request: VerifiedRequest }
  | {
      readonly kind: 'outcome'
      readonly speaker: Speaker
      readonly id: string
      readonly message: Uint8Array
    }
  | { readonly kind: 'open'; readonly speaker: Speaker; readonly id: string }
  | { readonly kind: 'drop'; readonly reason: string }

/** What a notification keeps, to verify its request's ending and to sign the answer given on it. */
export interface NoticeData {
  readonly v: 1
  /** The pairing it was verified with (speakerKey). */
  readonly speaker: string
  readonly device: string
  readonly id: string
  /** The digest this phone recomputed; absent for an `open` notice, which verified nothing. */
  readonly digest?: string
  readonly critical: boolean
  /** When the request runs out: a tap after it only opens the app (the speaker would refuse). */
  readonly expiresAt?: number
  /** The app at the card, relative to the worker's script: `./#card=<id>&device=<device>`. */
  readonly link: string
  /** `ended`: how it ended (nothing left to answer); `sending`: an answer is on its way. */
  readonly phase: 'asking' | 'sending' | 'ended'
}

export interface Notice {
  readonly title: string
  readonly options: NotificationOptions & { actions?: Array<{ action: string; title: string }> }
}

export function identityOf(s: Speaker): PhoneIdentity {
  return { device: s.device, phone: s.phone, key: fromBase64url(s.key) ?? new Uint8Array() }
}

/** One tag per request and speaker: a later notice for it replaces the earlier one. */
export function noticeTag(s: Speaker, id: string): string {
  return `nocturn:${speakerKey(s)}:${id}`
}

export function readPush(data: Uint8Array, speakers: readonly Speaker[], now: number): PushReading {
  const env = parseJsonObject(data)
  if (!env.ok) return { kind: 'drop', reason: env.reason }
  const e = env.value
  const kind = e.kind
  if (e.v !== 1 || (kind !== 'request' && kind !== 'outcome' && kind !== 'open')) {
    return { kind: 'drop', reason: 'invalid-payload' }
  }
  if (typeof e.device !== 'string' || !isId(e.device) || typeof e.topic !== 'string') {
    return { kind: 'drop', reason: 'invalid-payload' }
  }
  // The speaker whose topics the push names: its device, and a topic under its prefix.
  const want = kind === 'outcome' ? 'outcome' : 'request'
  let speaker: Speaker | undefined
  let id: string | undefined
  for (const s of speakers) {
    if (s.device !== e.device) continue
    const where = parseApprovalTopic(topicsFor(s.prefix, s.device), e.topic)
    if (where?.kind === want && where.id === e.id) {
      speaker = s
      id = where.id
      break
    }
  }
  if (!speaker || id === undefined) return { kind: 'drop', reason: 'not-paired-here' }
  if (kind === 'open') return { kind: 'open', speaker, id }
  if (typeof e.message !== 'object' || e.message === null) {
    return { kind: 'drop', reason: 'invalid-payload' }
  }
  // The message is embedded as published; its JSON text again is the same JSON value, which is
  // all the digest and the MACs are computed over (canonical forms).
  const message = new TextEncoder().encode(JSON.stringify(e.message))
  if (kind === 'outcome') return { kind: 'outcome', speaker, id, message }
  const r = verifyRequest(identityOf(speaker), id, message, now)
  return r.ok ? { kind: 'request', speaker, request: r.value } : { kind: 'drop', reason: r.reason }
}

/** The outcome of a push, believed only against the digest of the request its notice showed. */
export function verifyEnding(
  speaker: Speaker,
  shown: NoticeData,
  message: Uint8Array,
): VerifiedOutcome | undefined {
  if (shown.digest === undefined) return undefined
  const r = verifyOutcome(identityOf(speaker), shown.id, shown.digest, message)
  return r.ok ? r.value : undefined
}

function cardLinkOf(device: string, id: string): string {
  return `./#card=${encodeURIComponent(id)}&device=${encodeURIComponent(device)}`
}

function asked(r: VerifiedRequest, me: string): string {
  if (r.channel === 'voice') return 'asked by voice in the room'
  return r.askedBy ? `typed on ${phoneName(r.askedBy, me)}` : 'typed on a phone'
}

/**
 * A verified request as a notification: the action sentence, the speaker and who asked. An
 * ordinary tool gets Approve and Deny; a critical one none — a tap only opens the app at its card,
 * where the yes is given (and, with WebAuthn, needs its owner).
 */
export function requestNotice(s: Speaker, r: VerifiedRequest): Notice {
  const lines = [`${s.name} · ${asked(r, s.phone)}`]
  const args = argLines(r.args)
  if (args.length > 0) lines.push(args.join(' · '))
  if (r.said !== undefined) {
    lines.push(r.channel === 'voice' ? `Said in the room: “${r.said}”` : `Typed: “${r.said}”`)
  }
  if (r.critical) lines.push('Asks every time: open the app to answer.')
  const data: NoticeData = {
    v: 1,
    speaker: speakerKey(s),
    device: s.device,
    id: r.id,
    digest: r.digest,
    critical: r.critical,
    expiresAt: r.expiresAt,
    link: cardLinkOf(s.device, r.id),
    phase: 'asking',
  }
  return {
    title: `${sentence(r.action)}?`,
    options: {
      body: lines.join('\n'),
      tag: noticeTag(s, r.id),
      data,
      requireInteraction: true,
      ...(!r.critical && {
        actions: [
          { action: 'approve', title: 'Approve' },
          { action: 'deny', title: 'Deny' },
        ],
      }),
    },
  }
}

/** A request too large for a push: nothing verified, so nothing to answer here — open the app. */
export function openNotice(s: Speaker, id: string): Notice {
  const data: NoticeData = {
    v: 1,
    speaker: speakerKey(s),
    device: s.device,
    id,
    critical: true,
    link: cardLinkOf(s.device, id),
    phase: 'asking',
  }
  return {
    title: `${s.name} asks for a yes`,
    options: { body: 'Open the app to see what it asks.', tag: noticeTag(s, id), data },
  }
}

/** The answer tapped on a notification, on its way: replaced again by the ending. */
export function sendingNotice(s: Speaker, shown: NoticeData, title: string, yes: boolean): Notice {
  return {
    title,
    options: {
      body: `Sending your ${yes ? 'yes' : 'no'} to ${s.name}…`,
      tag: noticeTag(s, shown.id),
      data: { ...shown, phase: 'sending' } satisfies NoticeData,
      silent: true,
    },
  }
}

/** The answer could not be sent: the card in the app is where to try again. */
export function unsentNotice(s: Speaker, shown: NoticeData, title: string): Notice {
  return {
    title,
    options: {
      body: `Your answer did not reach ${s.name}: this phone cannot reach the household's message hub. Open the app to answer.`,
      tag: noticeTag(s, shown.id),
      data: { ...shown, phase: 'asking', critical: true } satisfies NoticeData,
    },
  }
}

/**
 * How a request ended, replacing its notice quietly: a push that ends a request must still show
 * something (browsers penalise silent pushes, and Safari ends the subscription after a few).
 */
export function endedNotice(
  s: Speaker,
  shown: NoticeData,
  title: string,
  o: VerifiedOutcome,
): Notice {
  const me = s.phone
  const words =
    o.state === 'approved' || o.state === 'denied'
      ? o.by === me
        ? `You ${o.state} this.`
        : `${sentence(o.state)} on ${phoneName(o.by ?? '', me)}.`
      : o.state === 'withdrawn'
        ? 'Withdrawn: the speaker no longer needs an answer.'
        : 'Expired: nobody answered in time.'
  return {
    title,
    options: {
      body: `${s.name}: ${words}`,
      tag: noticeTag(s, shown.id),
      data: { ...shown, phase: 'ended' } satisfies NoticeData,
      silent: true,
    },
  }
}
