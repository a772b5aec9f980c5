import type webPushModule from 'web-push'
import { errorText } from '../../core/errors.js'
import type { PushOptions, PushResult, PushSender } from '../../ports/push.js'
import type { PushSubscription } from '../../ports/push-subscriptions.js'
import type { VapidKeys } from './vapid-key-file.js'

export interface WebPushSenderOptions {
  readonly keys: VapidKeys
  /** The VAPID `sub`: how a push service's operator reaches the household (mailto: or https:). */
  readonly subject: string
  /** How long one push service may take to answer. */
  readonly timeoutMs?: number
  /** Where the request goes; Node's fetch unless a test says otherwise. */
  readonly fetch?: typeof fetch
}

const DEFAULT_TIMEOUT_MS = 10_000
/** The longest wait a push service's Retry-After is taken at: a request is not worth more. */
const MAX_RETRY_AFTER_MS = 60_000

/**
 * Web Push over `web-push`: it encrypts the payload (RFC 8291, `aes128gcm`) and makes the VAPID
 * `Authorization` header (RFC 8292, a 12-hour ES256 JWT for the endpoint's origin); the request
 * itself goes through Node's fetch, so the timeout, the answer's reading and the retry rule are
 * ours (`web-push`'s own sender speaks only HTTPS through `https.request`).
 */
export class WebPushSender implements PushSender {
  readonly publicKey: string
  readonly #options: WebPushSenderOptions

  constructor(options: WebPushSenderOptions) {
    this.#options = options
    this.publicKey = options.keys.publicKey
  }

  async send(to: PushSubscription, payload: Uint8Array, options: PushOptions): Promise<PushResult> {
    // Loaded at the first push, not at start: a device that is never subscribed never loads it.
    const { default: webPush } = await import('web-push')
    let details: ReturnType<typeof webPushModule.generateRequestDetails>
    try {
      details = webPush.generateRequestDetails(
        { endpoint: to.endpoint, keys: { p256dh: to.p256dh, auth: to.auth } },
        Buffer.from(payload),
        {
          vapidDetails: {
            subject: this.#options.subject,
            publicKey: this.#options.keys.publicKey,
            privateKey: this.#options.keys.privateKey,
          },
          TTL: Math.max(0, Math.round(options.ttlSeconds)),
          contentEncoding: 'aes128gcm',
          ...(options.topic !== undefined && { topic: options.topic }),
          ...(options.urgency !== undefined && { urgency: options.urgency }),
        },
      )
    } catch (err) {
      // A subscription with bad keys or an endpoint that is no URL: never deliverable.
      return { kind: 'failed', reason: `cannot encrypt for this subscription: ${errorText(err)}` }
    }
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(details.headers)) headers[k] = String(v)
    const doFetch = this.#options.fetch ?? fetch
    let res: Response
    try {
      res = await doFetch(details.endpoint, {
        method: 'POST',
        headers,
        body: details.body as Buffer,
        signal: AbortSignal.timeout(this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
        redirect: 'error',
      })
      // The answer's body says nothing we act on; read it so the connection is free again.
      await res.arrayBuffer().catch(() => undefined)
    } catch (err) {
      return { kind: 'retry', reason: `no answer from the push service: ${errorText(err)}` }
    }
    return resultOf(res.status, res.headers.get('retry-after'))
  }
}

/** What a push service's status means (RFC 8030 §5, §6.2, §7.3; RFC 8292 §4). */
function resultOf(status: number, retryAfter: string | null): PushResult {
  if (status >= 200 && status < 300) return { kind: 'delivered', status }
  if (status === 404 || status === 410) return { kind: 'gone', status }
  if (status === 429 || status >= 500) {
    const wait = retryAfterMs(retryAfter)
    return {
      kind: 'retry',
      status,
      reason: `the push service answered ${status}`,
      ...(wait !== undefined && { retryAfterMs: wait }),
    }
  }
  return { kind: 'failed', status, reason: `the push service refused it with ${status}` }
}

/** Retry-After in seconds or as an HTTP date, capped; undefined when absent or unreadable. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined
  const seconds = Number(value)
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - Date.now()
  if (!Number.isFinite(ms)) return undefined
  return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS)
}
