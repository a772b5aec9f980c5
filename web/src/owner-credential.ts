import { base64url, fromBase64url } from '../../src/protocol/phone-crypto.js'
import { type OwnerStatus, ownerChallenge } from '../../src/protocol/phone-side.js'
import type { SpeakerLink } from './speaker-link.js'

/** How long a person has to confirm with the fingerprint, face or screen lock. */
const CONFIRM_MS = 60_000

const NOT_CONFIRMED =
  'Your fingerprint, face or screen lock was not confirmed, so nothing was sent. Tap Approve to try again.'

/**
 * The owner's yes on this phone (docs/phone-app.md, "Critical requests need you"): a WebAuthn
 * credential made with the phone's own screen lock, fingerprint or face, registered with each
 * speaker over the signed channel, and an assertion over the request's digest with every critical
 * yes. Each speaker's answer to `owner_status` is read when the phone connects, so a tap can ask
 * the authenticator at once: some browsers (Safari) take WebAuthn only straight from a tap.
 */
export class OwnerCredentials {
  readonly #status = new Map<string, OwnerStatus>()
  /** The last registration's problem per speaker, shown until the next try. */
  readonly #problems = new Map<string, string>()
  readonly #changed: () => void

  constructor(changed: () => void) {
    this.#changed = changed
  }

  /** Whether this browser, on this page, can make and use a credential at all. */
  static possible(): boolean {
    return (
      typeof window !== 'undefined' &&
      window.isSecureContext &&
      typeof PublicKeyCredential !== 'undefined' &&
      typeof navigator.credentials?.create === 'function'
    )
  }

  /** Asks the speaker how this phone stands (a speaker older than the owner's yes never answers). */
  refresh(link: SpeakerLink): void {
    link.call('owner_status', {}).done.then(
      (body) => {
        if (!isStatus(body)) return
        this.#status.set(link.id, body)
        this.#changed()
      },
      () => {},
    )
  }

  of(link: SpeakerLink): OwnerStatus | undefined {
    return this.#status.get(link.id)
  }

  /** Why this phone cannot register here, in a sentence; undefined when it can. */
  whyNot(link: SpeakerLink): string | undefined {
    const s = this.#status.get(link.id)
    if (!s) return `${link.speaker.name} has not said yet whether it takes a fingerprint here.`
    // WebAuthn refuses an IP address as the relying party: on one, trying again can never work.
    const byNumber =
      'Browsers offer a fingerprint, face or screen lock only to an app opened by its name, never by a number address such as'
    const speakerHost = new URL(s.origin).hostname
    if (isAddress(speakerHost)) {
      return `${byNumber} ${speakerHost} — and ${link.speaker.name} serves its app only at ${s.origin}. Whoever looks after ${link.speaker.name} can give the app a name (such as ${link.speaker.device}.local) in its settings; then open the app by that name.`
    }
    if (isAddress(location.hostname) && location.origin !== s.origin) {
      return `${byNumber} ${location.hostname}. Open the app at ${s.origin} instead, and protect it there.`
    }
    if (!OwnerCredentials.possible()) {
      return `This page is not secure (it is not HTTPS), so the browser offers no fingerprint, face or screen lock to the app. Open the app at ${s.origin} once the household's certificate is trusted on this phone (see "HTTPS for the app").`
    }
    if (location.origin !== s.origin) {
      return `${link.speaker.name} takes this only from the app at ${s.origin}: open the app there and try again.`
    }
    return undefined
  }

  problemOf(link: SpeakerLink): string | undefined {
    return this.#problems.get(link.id)
  }

  /**
   * Makes the credential (the person confirms on the phone) and registers it with the speaker;
   * false when it did not happen, the sentence why in `problemOf`.
   */
  async register(link: SpeakerLink): Promise<boolean> {
    this.#problems.delete(link.id)
    try {
      await this.#register(link)
      return true
    } catch (err) {
      this.#problems.set(link.id, err instanceof Error ? err.message : String(err))
      this.#changed()
      return false
    }
  }

  async #register(link: SpeakerLink): Promise<void> {
    const s = this.#status.get(link.id)
    const why = this.whyNot(link)
    if (why || !s) throw new Error(why)
    if (s.registered) return
    if (s.challengeExpiresAt <= Date.now()) {
      this.refresh(link)
      throw new Error('That took too long. Tap once more.')
    }
    let made: Credential | null
    try {
      made = await navigator.credentials.create({
        publicKey: {
          challenge: bytes(s.challenge),
          rp: { id: s.rpId, name: `Nocturn ${link.speaker.name}` },
          user: {
            id: new TextEncoder()
              .encode(`${link.speaker.device}/${link.speaker.phone}`)
              .slice(0, 64),
            name: link.speaker.phone,
            displayName: `${link.speaker.name}: this phone`,
          },
          pubKeyCredParams: [
            { type: 'public-key', alg: -7 },
            { type: 'public-key', alg: -257 },
          ],
          authenticatorSelection: { userVerification: 'required', residentKey: 'discouraged' },
          attestation: 'none',
          timeout: CONFIRM_MS,
        },
      })
    } catch {
      throw new Error(
        'Your fingerprint, face or screen lock was not confirmed, so nothing was registered. Try again.',
      )
    }
    if (!(made instanceof PublicKeyCredential)) throw new Error('The browser made no credential.')
    const r = made.response as AuthenticatorAttestationResponse
    // The challenge is used up whatever the speaker says: the next try needs a fresh one.
    const registered = link.call('owner_register', {
      credential: {
        id: made.id,
        rawId: base64url(new Uint8Array(made.rawId)),
        type: 'public-key',
        response: {
          clientDataJSON: base64url(new Uint8Array(r.clientDataJSON)),
          attestationObject: base64url(new Uint8Array(r.attestationObject)),
          transports: r.getTransports?.() ?? [],
        },
        ...(made.authenticatorAttachment && {
          authenticatorAttachment: made.authenticatorAttachment,
        }),
        clientExtensionResults: made.getClientExtensionResults(),
      },
    }).done
    await registered.finally(() => this.refresh(link))
  }

  /**
   * What a critical yes on this phone carries: the owner's assertion over the request's digest, or
   * nothing from a phone that registered none where the speaker allows it. A problem is a sentence
   * for the card; nothing is sent then.
   */
  async yes(link: SpeakerLink, digest: string): Promise<{ owner?: unknown } | { problem: string }> {
    const s = this.#status.get(link.id)
    if (!s?.registered || !s.credentialId) {
      if (!s?.required) return {}
      return {
        problem: `${link.speaker.name} takes a yes to this only with this phone's fingerprint, face or screen lock, and none is registered here. Register it under Speakers, or ask someone whose phone has one. You can still deny it.`,
      }
    }
    if (!OwnerCredentials.possible()) {
      return {
        problem: `This needs your fingerprint, face or screen lock, which this page cannot ask for: open the app at ${s.origin}.`,
      }
    }
    let got: Credential | null
    try {
      got = await navigator.credentials.get({
        publicKey: {
          challenge: ownerChallenge(digest).slice(),
          rpId: s.rpId,
          allowCredentials: [{ type: 'public-key', id: bytes(s.credentialId) }],
          userVerification: 'required',
          timeout: CONFIRM_MS,
        },
      })
    } catch {
      return { problem: NOT_CONFIRMED }
    }
    if (!(got instanceof PublicKeyCredential)) return { problem: NOT_CONFIRMED }
    const r = got.response as AuthenticatorAssertionResponse
    return {
      owner: {
        id: got.id,
        rawId: base64url(new Uint8Array(got.rawId)),
        type: 'public-key',
        response: {
          clientDataJSON: base64url(new Uint8Array(r.clientDataJSON)),
          authenticatorData: base64url(new Uint8Array(r.authenticatorData)),
          signature: base64url(new Uint8Array(r.signature)),
          ...(r.userHandle && { userHandle: base64url(new Uint8Array(r.userHandle)) }),
        },
        ...(got.authenticatorAttachment && {
          authenticatorAttachment: got.authenticatorAttachment,
        }),
        clientExtensionResults: got.getClientExtensionResults(),
      },
    }
  }
}

/** An IPv4 or IPv6 address, as `URL.hostname` gives it, rather than a name. */
function isAddress(host: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host) || host.startsWith('[')
}

function bytes(text: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(fromBase64url(text) ?? new Uint8Array())
}

function isStatus(b: unknown): b is OwnerStatus {
  const s = b as Partial<OwnerStatus> | null
  return (
    typeof s?.registered === 'boolean' &&
    typeof s.required === 'boolean' &&
    typeof s.rpId === 'string' &&
    typeof s.origin === 'string' &&
    typeof s.challenge === 'string' &&
    typeof s.challengeExpiresAt === 'number'
  )
}
