import type { OwnerStatus } from '../protocol/phone-side.js'
/**
 * OwnerCheck: whether a critical yes carries its owner — an assertion by the WebAuthn credential
 * the deciding phone registered, user-verified, made for this very request (docs/protocol.md,
 * "The owner's yes"); and the registration of that credential. The approver asks it for every
 * critical approve; a deny never needs it.
 */
export interface OwnerCheck {
  /**
   * Whether a critical approve from `phone`, carrying `assertion` (the decision's `owner` field,
   * as received), for the request with digest `digest`, carries its owner. Never throws.
   */
  checkYes(phone: string, assertion: unknown, digest: string): Promise<OwnerVerdict>
  /** What a phone needs to register (or knows it has): see `OwnerStatus`. */
  status(phone: string): OwnerStatus
  /**
   * Registers the credential `response` (the browser's `PublicKeyCredential` as JSON) for
   * `phone`, against the challenge `status` handed out. Throws a sentence naming what failed.
   */
  register(phone: string, response: unknown): Promise<{ credentialId: string }>
}

/**
 * `no-credential`: the phone registered none and the household requires one for a critical yes.
 * The others say what was wrong with the assertion.
 */
export type OwnerRefusal =
  | 'no-credential'
  | 'no-assertion'
  | 'unknown-credential'
  | 'not-user-verified'
  | 'invalid-assertion'

export type OwnerVerdict =
  | { readonly ok: true; readonly owner: boolean }
  | { readonly ok: false; readonly reason: OwnerRefusal; readonly detail?: string }
