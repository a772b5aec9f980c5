import { describe, expect, it } from 'vitest'
import { ownerChallenge as deviceChallenge } from '../../src/adapters/webauthn/owner-check.js'
import { ownerChallengeText } from '../../src/protocol/forms.js'
import {
  type PhoneRequestFields,
  phoneRequestMacInput,
  phoneRequestSchema,
  signPhoneRequest,
} from '../../src/protocol/grant-ops.js'
import { ownerOpArgSchemas } from '../../src/protocol/owner-ops.js'
import { base64url } from '../../src/protocol/phone-crypto.js'
import { ownerChallenge as phoneChallenge } from '../../src/protocol/phone-side.js'
import { docVector } from '../helpers/protocol-doc.js'

describe(`docs/protocol.md, "The owner's yes (WebAuthn)"`, () => {
  const v = docVector('owner-vector')

  it('the challenge of a critical yes: its text, its SHA-256, its base64url — the same on the device and the phone', () => {
    const digest = v.digest ?? ''
    expect(JSON.stringify(ownerChallengeText(digest))).toBe(v['challenge.input'])
    const bytes = phoneChallenge(digest)
    expect(Buffer.from(bytes).toString('hex')).toBe(v['challenge.sha256'])
    expect(base64url(bytes)).toBe(v.challenge)
    expect(deviceChallenge(digest)).toBe(v.challenge)
    // Another request, another challenge.
    expect(deviceChallenge(`${digest.slice(0, 63)}0`)).not.toBe(v.challenge)
  })

  it('the owner_status request is signed like every phone request', () => {
    const key = Buffer.from(v.key ?? '', 'hex')
    const request = JSON.parse(v.request ?? '{}') as PhoneRequestFields
    expect(phoneRequestSchema.safeParse({ v: 1, ...request, mac: '0'.repeat(64) }).success).toBe(
      true,
    )
    expect(ownerOpArgSchemas.owner_status.safeParse(request.args).success).toBe(true)
    expect(JSON.stringify(phoneRequestMacInput(request))).toBe(v['request.mac.input'])
    expect(signPhoneRequest(key, request)).toBe(v['request.mac'])
  })
})
