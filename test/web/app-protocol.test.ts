import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/core/canonical-json.js'
import {
  canonicalJsonText,
  conversationReplyMacText,
  conversationRequestMacText,
  decisionMacText,
  outcomeMacText,
} from '../../src/protocol/forms.js'
import { decisionMacInput, requestDigest, signRequest } from '../../src/protocol/index.js'
import { hmacHex } from '../../web/src/crypto.js'
import { parsePairing } from '../../web/src/pairing.js'
import { verifyOutcome, verifyReply, verifyRequest } from '../../web/src/verify.js'
import { docVector, VECTOR_DECISION, VECTOR_REQUEST } from '../helpers/protocol-doc.js'

// The app's own verification (the code that runs in the browser) against docs/protocol.md's vectors.
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

describe('the app speaks protocol v1 exactly as docs/protocol.md writes it', () => {
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
      reason: 'bad-reply-mac',
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
      verifyOutcome(me, shown.value, bytes({ ...o, macs: { anna: v['outcome.mac'] } })),
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
    expect(verifyOutcome(me, shown.value, bytes({ ...o, macs: { anna: mac } }))).toMatchObject({
      ok: true,
      value: { state: 'approved', by: 'ben' },
    })
    const refused = (x: unknown) => {
      const r = verifyOutcome(me, shown.value, bytes(x))
      return r.ok ? 'ok' : r.reason
    }
    expect(refused(o)).toBe('unsigned-outcome')
    expect(refused({ ...o, by: 'anna', macs: { anna: mac } })).toBe('bad-outcome-mac')
    expect(refused({ ...o, state: 'denied', macs: { anna: mac } })).toBe('bad-outcome-mac')
    const untilText = outcomeMacText({ ...o, grant: { until: 5 }, digest: 'd' })
    expect(untilText.split('\n')[4]).toBe('until:5')
    expect(outcomeMacText({ id: 'x', state: 'expired', at: 1, digest: 'd' })).toBe(
      'nocturn-outcome-v1\nx\nexpired\n\n\n1\nd',
    )
  })

  it("canonical JSON is the device's, byte for byte", () => {
    expect(requestDigest(request)).toBe(v['request.digest'])
    expect(signRequest(key, v['request.digest'] ?? '')).toBe(v['request.mac'])
    const odd = { b: [1, { d: undefined, c: 'é\n\u2028' }], a: null, é: 1.5, A: [-0, 1e21, 'x'] }
    expect(canonicalJsonText(odd)).toBe(canonicalJson(odd))
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
