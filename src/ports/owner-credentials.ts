/**
 * OwnerCredentialStore: each paired phone's WebAuthn credential (docs/protocol.md, "The owner's
 * yes"), kept so a critical yes still needs its owner after a restart. At most one per phone.
 * `keyTag` names the phone's pairing key the credential was registered under: a phone revoked and
 * paired again under the same id has another key, so its old credential counts for nothing.
 */
export interface OwnerCredentialStore {
  ownerCredential(phone: string): OwnerCredential | undefined
  /** Adds or replaces the credential of `credential.phone`. */
  putOwnerCredential(credential: OwnerCredential): void
  /**
   * Moves the signature counter on, only if `counter` is above the one kept; false when it is not
   * (an assertion replayed, or a cloned authenticator).
   */
  advanceOwnerCounter(phone: string, id: string, counter: number): boolean
  /** True if it was there. */
  removeOwnerCredential(phone: string): boolean
  /** Every phone that has one. */
  ownerPhones(): string[]
}

/** A phone's registered WebAuthn credential: what the device keeps to check its owner's yes. */
export interface OwnerCredential {
  readonly phone: string
  /** The credential id, base64url. */
  readonly id: string
  /** The COSE public key, as the authenticator gave it. */
  readonly publicKey: Uint8Array
  /** The signature counter last seen (0 for authenticators that keep none). */
  readonly counter: number
  /** Which pairing key of the phone it belongs to (see above). */
  readonly keyTag: string
  readonly createdAt: number
}
