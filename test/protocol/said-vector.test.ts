import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/core/canonical-json.js'
import {
  requestDigest,
  SAID_MAX_CHARS,
  saidForRequest,
  signRequest,
} from '../../src/protocol/index.js'
import { verifyRequest } from '../../src/protocol/phone-side.js'
import { docVector, VECTOR_REQUEST } from '../helpers/protocol-doc.js'

// docs/protocol.md, "What was said": the words that led to a request, bound into its digest.
const v = docVector('said-vector')
const key = Uint8Array.from(Buffer.from(v.key ?? '', 'hex'))
const body = { ...VECTOR_REQUEST, said: v.said ?? '' }
const me = { device: 'kitchen', phone: 'anna', key }
const bytes = (o: unknown) => new TextEncoder().encode(JSON.stringify(o))
const signed = (b: Record<string, unknown>) => {
  const digest = requestDigest(b)
  return { ...b, digest, macs: { anna: signRequest(Buffer.from(key), digest) } }
}

describe('what was said (docs/protocol.md)', () => {
  it('the vector: canonical form, digest and MAC with `said`', () => {
    expect(v.said).toMatch(/—/)
    expect(canonicalJson(body)).toBe(v['request.canonical'])
    expect(requestDigest(body)).toBe(v['request.digest'])
    expect(signRequest(Buffer.from(key), v['request.digest'] ?? '')).toBe(v['request.mac'])
  })

  it('a phone shows the signed words, and drops the request when they were changed after signing', () => {
    const request = { ...body, digest: v['request.digest'], macs: { anna: v['request.mac'] } }
    const at = request.createdAt + 1000
    const ok = verifyRequest(me, request.id, bytes(request), at)
    expect(ok).toMatchObject({ ok: true, value: { said: v.said } })
    const reason = (r: unknown) => {
      const x = verifyRequest(me, request.id, bytes(r), at)
      return x.ok ? 'ok' : x.reason
    }
    expect(reason({ ...request, said: 'Please let the plumber in.' })).toBe('digest-mismatch')
    const { said: _removed, ...without } = request
    expect(reason(without)).toBe('digest-mismatch')
    // Not a string of 1–200 characters: refused by its shape, even when signed.
    expect(reason(signed({ ...body, said: 'x'.repeat(SAID_MAX_CHARS + 1) }))).toBe(
      'invalid-payload',
    )
    expect(reason(signed({ ...body, said: '' }))).toBe('invalid-payload')
    expect(reason(signed({ ...body, said: 42 }))).toBe('invalid-payload')
    expect(reason(signed({ ...body, said: 'x'.repeat(SAID_MAX_CHARS) }))).toBe('ok')
  })

  it('the device cuts long words at the end with "…", and makes whitespace one space', () => {
    expect(saidForRequest(undefined)).toBeUndefined()
    expect(saidForRequest('  \n ')).toBeUndefined()
    expect(saidForRequest(' unlock\n the   door ')).toBe('unlock the door')
    const exact = 'a'.repeat(SAID_MAX_CHARS)
    expect(saidForRequest(exact)).toBe(exact)
    const cut = saidForRequest(`${'b'.repeat(250)}`)
    expect(cut).toBe(`${'b'.repeat(SAID_MAX_CHARS - 1)}…`)
    expect(cut).toHaveLength(SAID_MAX_CHARS)
    // A cut never splits an emoji's surrogate pair.
    const emoji = saidForRequest(`${'c'.repeat(SAID_MAX_CHARS - 2)}😀😀😀`) ?? ''
    expect(emoji).toBe(`${'c'.repeat(SAID_MAX_CHARS - 2)}…`)
    expect(emoji.length).toBeLessThanOrEqual(SAID_MAX_CHARS)
  })
})
