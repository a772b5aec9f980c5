import { errorText } from '../../core/errors.js'
import type { Alerter, ApprovalAlert } from '../../ports/alert.js'

export interface NtfyAlerterOptions {
  /** The ntfy server, e.g. `https://ntfy.sh` or the household's own. */
  readonly server: string
  readonly topic: string
  /** An access token for a protected topic (sent as a bearer token; never logged). */
  readonly token?: string
  readonly timeoutMs?: number
  readonly fetch?: typeof fetch
}

/**
 * Approval alerts through ntfy (docs/phone-app.md, "Alerts without a certificate"): one message
 * per request, POSTed to the configured topic with `Title`, `Tags`, `Priority` and a `Click` URL
 * that opens the app at the card. An ntfy topic is readable by anyone who knows its name, so the
 * message says only what is asked and by which speaker: no key, no MAC, no decision. Endings are
 * not sent (ntfy has no notification to close), the card in the app shows them.
 */
export class NtfyAlerter implements Alerter {
  readonly name = 'ntfy'
  readonly #o: NtfyAlerterOptions
  readonly #url: string

  constructor(options: NtfyAlerterOptions) {
    this.#o = options
    this.#url = `${options.server.replace(/\/+$/, '')}/${encodeURIComponent(options.topic)}`
  }

  async alert(a: ApprovalAlert): Promise<void> {
    if (a.kind !== 'request') return
    const headers: Record<string, string> = {
      'Content-Type': 'text/plain; charset=utf-8',
      Title: headerText(`${a.device} asks for a yes`),
      Tags: a.critical ? 'lock,warning' : 'bell',
      Priority: a.critical ? 'high' : 'default',
      Click: a.url,
    }
    if (this.#o.token !== undefined) headers.Authorization = `Bearer ${this.#o.token}`
    const body = `${a.action ?? 'The speaker asks for a yes.'}\nOpen the app to answer.`
    let res: Response
    try {
      res = await (this.#o.fetch ?? fetch)(this.#url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(this.#o.timeoutMs ?? 10_000),
        redirect: 'error',
      })
      await res.arrayBuffer().catch(() => undefined)
    } catch (err) {
      // The URL names the server and topic only; the token is in a header, never in the text.
      throw new Error(`ntfy at ${this.#o.server} did not answer: ${errorText(err)}`)
    }
    if (!res.ok) throw new Error(`ntfy at ${this.#o.server} refused the alert with ${res.status}`)
  }
}

/** A header value in ASCII; anything else as an RFC 2047 encoded word, which ntfy reads. */
function headerText(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text)) return text
  return `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`
}
