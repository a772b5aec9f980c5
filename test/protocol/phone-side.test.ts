import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  conversationReplyMacText,
  conversationRequestMacText,
  decisionMacText,
  outcomeMacText,
} from '../../src/protocol/forms.js'
import { decisionMacInput, requestDigest, signRequest } from '../../src/protocol/index.js'
import { hmacHex } from '../../src/protocol/phone-crypto.js'
import {
  decisionMessage,
  phoneRequestMessage,
  verifyOutcome,
  verifyReply,
  verifyRequest,
} from '../../src/protocol/phone-side.js'
import { parsePairing } from '../../web/src/pairing.js'
import { docVector, VECTOR_DECISION, VECTOR_REQUEST } from '../helpers/protocol-doc.js'

// The phone side of the protocol (the one file the app in the browser and the terminal phone both
// run) against docs/protocol.md's vectors.
const v = docVector('vector')
const cv = docVector('conversation-vector')
const key = Uint8Array.from(Buffer.from(v.key ?? '', 'hex'))
const request = {
  ...VECTOR_REQUEST,
  digest: v['request.digest'],
  macs: { anna: v['request.mac'] },
}
const me = { device: 'kitchen', phone: 'anna', key }
const bytes = (o: unknown) => new TextEncoder().encode(JSON.stringify(o))

describe('the phone side speaks protocol v1 exactly as docs/protocol.md writes it', () => {
  it('verifies the documented request, and refuses it changed, unsigned for it, or elsewhere', () => {
    const at = request.createdAt + 1000
    const ok = verifyRequest(me, request.id, bytes(request), at)
    expect(ok).toMatchObject({ ok: true, value: { digest: v['request.digest'] } })
    const reason = (r: unknown, m = me, id = request.id, now = at) => {
      const x = verifyRequest(m, id, bytes(r), now)
      return x.ok ? 'ok' : x.reason
    }
    expect(reason({ ...request, args: { door: 'back' } })).toBe('digest-mismatch')
    expect(reason({ ...request, action: 'open the gate' })).toBe('digest-mismatch')
    expect(reason({ ...request, macs: { ben: v['request.mac'] } })).toBe(
      'not-signed-for-this-phone',
    )
    expect(reason(request, { ...me, key: new Uint8Array(32) })).toBe('bad-mac')
    expect(reason(request, { ...me, device: 'garage' })).toBe('wrong-device')
    expect(reason(request, me, 'other-id')).toBe('id-mismatch')
    expect(reason(request, me, request.id, request.expiresAt)).toBe('expired')
    expect(verifyRequest(me, 'x', new TextEncoder().encode('{'), at)).toEqual({
      ok: false,
      reason: 'malformed-json',
    })
    // An unknown field is part of the digest: added unnoticed, it fails.
    expect(reason({ ...request, extra: 1 })).toBe('digest-mismatch')
  })

  it('signs a decision with the documented input and MAC', () => {
    const d = VECTOR_DECISION
    expect(decisionMacText(d)).toBe(JSON.parse(v['decision.mac.input'] ?? '""'))
    expect(decisionMacText(d)).toBe(decisionMacInput(d))
    expect(hmacHex(key, decisionMacText(d))).toBe(v['decision.mac'])
    // The message a phone sends: the documented decision, its MAC over the verified digest.
    const sent = decisionMessage(me, d, d.decision, d.grant, d.at, d.nonce)
    expect(sent).toEqual({
      v: 1,
      id: d.id,
      decision: d.decision,
      grant: d.grant,
      phone: d.phone,
      at: d.at,
      nonce: d.nonce,
      mac: v['decision.mac'],
    })
    // A deny never asks for more than once.
    expect(decisionMessage(me, d, 'deny', 'session', d.at, d.nonce).grant).toBe('once')
  })

  it('signs conversation requests and verifies replies with the documented vector', () => {
    const r = {
      id: 'req-0001',
      device: 'kitchen',
      phone: 'anna',
      op: 'say',
      at: 1764489700000,
      nonce: 'bm9jdHVybi1ub25jZS0wMg',
      args: { conversation: 'conv-42', text: 'Is the back door locked?' },
    }
    expect(conversationRequestMacText(r)).toBe(JSON.parse(cv['request.mac.input'] ?? '""'))
    expect(hmacHex(key, conversationRequestMacText(r))).toBe(cv['request.mac'])
    expect(phoneRequestMessage(me, r.id, r.op, r.args, r.at, r.nonce)).toEqual({
      v: 1,
      ...r,
      mac: cv['request.mac'],
    })
    const reply = {
      v: 1,
      re: 'req-0001',
      device: 'kitchen',
      phone: 'anna',
      n: 0,
      kind: 'part',
      body: { text: 'Yes, it is ' },
      at: 1764489700450,
      mac: cv['reply.mac'],
    }
    expect(conversationReplyMacText(reply)).toBe(JSON.parse(cv['reply.mac.input'] ?? '""'))
    expect(verifyReply(me, bytes(reply))).toMatchObject({ ok: true })
    expect(verifyReply(me, bytes({ ...reply, body: { text: 'No' } }))).toMatchObject({
      ok: false,
      reason: 'bad-mac',
    })
    expect(verifyReply({ ...me, phone: 'ben' }, bytes(reply))).toMatchObject({ ok: false })
  })

  it('verifies the documented signed outcome', () => {
    const shown = verifyRequest(me, request.id, bytes(request), request.createdAt)
    if (!shown.ok) throw new Error('the vector request must verify')
    const o = {
      v: 1,
      id: request.id,
      state: 'approved',
      by: 'anna',
      grant: 'once',
      at: 1764489630012,
    }
    expect(outcomeMacText({ ...o, grant: 'once', digest: shown.value.digest })).toBe(
      JSON.parse(v['outcome.mac.input'] ?? '""'),
    )
    expect(
      verifyOutcome(
        me,
        request.id,
        shown.value.digest,
        bytes({ ...o, macs: { anna: v['outcome.mac'] } }),
      ),
    ).toMatchObject({ ok: true })
  })

  it('believes an outcome only with a MAC binding it to the digest of the request it showed', () => {
    const shown = verifyRequest(me, request.id, bytes(request), request.createdAt)
    if (!shown.ok) throw new Error('the vector request must verify')
    const o = {
      v: 1,
      id: request.id,
      state: 'approved',
      by: 'ben',
      grant: 'once',
      at: 1764489631000,
    }
    const text = outcomeMacText({ ...o, grant: 'once', digest: shown.value.digest })
    expect(text).toBe(
      `nocturn-outcome-v1\n${request.id}\napproved\nben\nonce\n1764489631000\n${v['request.digest']}`,
    )
    const mac = createHmac('sha256', key).update(text, 'utf8').digest('hex')
    expect(
      verifyOutcome(me, request.id, shown.value.digest, bytes({ ...o, macs: { anna: mac } })),
    ).toMatchObject({
      ok: true,
      value: { state: 'approved', by: 'ben' },
    })
    const refused = (x: unknown) => {
      const r = verifyOutcome(me, request.id, shown.value.digest, bytes(x))
      return r.ok ? 'ok' : r.reason
    }
    expect(refused(o)).toBe('not-signed-for-this-phone')
    expect(refused({ ...o, by: 'anna', macs: { anna: mac } })).toBe('bad-mac')
    expect(refused({ ...o, state: 'denied', macs: { anna: mac } })).toBe('bad-mac')
    const untilText = outcomeMacText({ ...o, grant: { until: 5 }, digest: 'd' })
    expect(untilText.split('\n')[4]).toBe('until:5')
    expect(outcomeMacText({ id: 'x', state: 'expired', at: 1, digest: 'd' })).toBe(
      'nocturn-outcome-v1\nx\nexpired\n\n\n1\nd',
    )
  })

  it("canonical JSON is the device's, byte for byte", () => {
    expect(requestDigest(request)).toBe(v['request.digest'])
    expect(signRequest(key, v['request.digest'] ?? '')).toBe(v['request.mac'])
  })

  it('reads a pairing link, and says in a sentence what is wrong with a broken one', () => {
    const uri = `nocturn-pair:v1?broker=ws%3A%2F%2Fhub%3A9001&device=kitchen&prefix=nocturn%2Fv1&phone=anna&key=${Buffer.from(key).toString('base64url')}`
    expect(parsePairing(`http://hub:8080/#pair=${encodeURIComponent(uri)}`)).toMatchObject({
      ok: true,
      speaker: { device: 'kitchen', phone: 'anna', wsUrl: 'ws://hub:9001', username: 'anna' },
    })
    expect(parsePairing('hello')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('not a Nocturn pairing link'),
    })
    expect(parsePairing(uri.slice(0, -5))).toMatchObject({
      ok: false,
      problem: expect.stringContaining('256 bits'),
    })
    expect(parsePairing(uri.replace('device=kitchen', 'device=a/b'))).toMatchObject({
      ok: false,
      problem: expect.stringContaining('names no speaker'),
    })
  })
})
