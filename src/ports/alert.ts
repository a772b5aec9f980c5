/**
 * Alerter: tells a household where it already gets alerts (an ntfy topic, Home Assistant's
 * companion app) that a request waits, with a link that opens the app at its card. An alert carries
 * no authority: no key, no MAC, no decision — the signed yes happens in the app. Resolves when the
 * channel took it; rejects with a reason when it did not.
 */
export interface Alerter {
  readonly name: string
  alert(alert: ApprovalAlert): Promise<void>
}

export interface ApprovalAlert {
  readonly kind: 'request' | 'ended'
  readonly id: string
  /** The device that asks. */
  readonly device: string
  /** The sentence the phones are shown. */
  readonly action?: string
  readonly tool?: string
  readonly critical?: boolean
  /** The phone whose typed message led to the request. */
  readonly askedBy?: string
  readonly expiresAt?: number
  /** How it ended (kind "ended"). */
  readonly state?: string
  /** Opens the app at the request's card. */
  readonly url: string
}
