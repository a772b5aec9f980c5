import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import { isoCBOR } from '@simplewebauthn/server/helpers'

const UP = 0x01
const UV = 0x04
const AT = 0x40

const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest()

/**
 * A software WebAuthn authenticator (ES256, attestation "none"), as a phone's platform
 * authenticator behaves: it makes one credential and signs assertions with it, and a test says
 * whether the user was verified. Written from the WebAuthn spec's byte layouts.
 */
export class SoftAuthenticator {
  readonly credentialId = randomBytes(16)
  readonly #keys = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  #counter = 0

  constructor(
    readonly rpId: string,
    readonly origin: string,
  ) {}

  get id(): string {
    return this.credentialId.toString('base64url')
  }

  /** navigator.credentials.create() for `challenge` (base64url), as its JSON. */
  create(challenge: string, o: { userVerified?: boolean } = {}): RegistrationResponseJSON {
    const jwk = this.#keys.publicKey.export({ format: 'jwk' })
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x ?? '', 'base64url')],
        [-3, Buffer.from(jwk.y ?? '', 'base64url')],
      ]),
    )
    const idLen = Buffer.alloc(2)
    idLen.writeUInt16BE(this.credentialId.length)
    const authData = Buffer.concat([
      this.#head(UP | AT | (o.userVerified === false ? 0 : UV)),
      Buffer.alloc(16),
      idLen,
      this.credentialId,
      Buffer.from(cose),
    ])
    const attestation = new Map<string, string | Uint8Array | Map<string, string>>([
      ['fmt', 'none'],
      ['attStmt', new Map<string, string>()],
      ['authData', authData],
    ])
    const attestationObject = isoCBOR.encode(attestation as Parameters<typeof isoCBOR.encode>[0])
    const clientDataJSON = this.#clientData('webauthn.create', challenge)
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['internal'],
      },
    }
  }

  /** navigator.credentials.get() for `challenge` (base64url), as its JSON. */
  get(challenge: string, o: { userVerified?: boolean } = {}): AuthenticationResponseJSON {
    this.#counter++
    const authData = this.#head(UP | (o.userVerified === false ? 0 : UV))
    const clientDataJSON = this.#clientData('webauthn.get', challenge)
    const signature = sign(
      'sha256',
      Buffer.concat([authData, sha256(clientDataJSON)]),
      this.#keys.privateKey,
    )
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
      },
    }
  }

  /** rpIdHash, flags, the signature counter. */
  #head(flags: number): Buffer {
    const counter = Buffer.alloc(4)
    counter.writeUInt32BE(this.#counter)
    return Buffer.concat([sha256(this.rpId), Buffer.from([flags]), counter])
  }

  #clientData(type: string, challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }))
  }
}
