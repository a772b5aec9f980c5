import { describe, expect, it } from 'vitest'
import { parseGrant } from '../../src/phone/client.js'
import {
  decisionSchema,
  isPrefix,
  MAX_PAYLOAD_BYTES,
  newKey,
  newNonce,
  pairingUri,
  parseApprovalTopic,
  parsePairingUri,
  parsePayload,
  topicsFor,
} from '../../src/protocol/index.js'

describe('protocol v1 pieces', () => {
  const t = topicsFor('nocturn/v1', 'kitchen')

  it('names topics and reads them back; nothing else matches', () => {
    expect(t.request('a1')).toBe('nocturn/v1/kitchen/approvals/a1')
    expect(parseApprovalTopic(t, t.decision('a1'))).toEqual({ kind: 'decision', id: 'a1' })
    expect(parseApprovalTopic(t, t.outcome('a1'))).toEqual({ kind: 'outcome', id: 'a1' })
    expect(parseApprovalTopic(t, t.request('a1'))).toEqual({ kind: 'request', id: 'a1' })
    expect(parseApprovalTopic(t, 'nocturn/v1/kitchen/approvals/a1/other')).toBeUndefined()
    expect(parseApprovalTopic(t, 'nocturn/v1/hall/approvals/a1')).toBeUndefined()
    expect(parseApprovalTopic(t, `nocturn/v1/kitchen/approvals/${'x'.repeat(65)}`)).toBeUndefined()
  })

  it('refuses prefixes and ids that would change the topic tree', () => {
    expect(isPrefix('home/nocturn')).toBe(true)
    for (const bad of ['', 'a//b', 'a/+', 'a/#', '$SYS', '/a']) expect(isPrefix(bad)).toBe(false)
    expect(() => topicsFor('nocturn/v1', 'kit/chen')).toThrow()
    expect(() => topicsFor('nocturn/v1', '+')).toThrow()
  })

  it('reads payloads: size before JSON, JSON before schema; unknown fields ignored', () => {
    const ok = {
      v: 1,
      id: 'a1',
      decision: 'deny',
      grant: 'once',
      phone: 'anna',
      at: 1,
      nonce: newNonce(),
      mac: 'a'.repeat(64),
      extra: { ignored: true },
    }
    const r = parsePayload(decisionSchema, Buffer.from(JSON.stringify(ok)))
    expect(r.ok && 'extra' in r.value).toBe(false)
    expect(r.ok).toBe(true)
    const big = Buffer.alloc(MAX_PAYLOAD_BYTES + 1, 0x7b)
    expect(parsePayload(decisionSchema, big)).toMatchObject({ ok: false, reason: 'oversized' })
    expect(parsePayload(decisionSchema, Buffer.from('{'))).toMatchObject({
      reason: 'malformed-json',
    })
    expect(parsePayload(decisionSchema, Buffer.from('[1]'))).toMatchObject({
      reason: 'invalid-payload',
    })
    const wrong = { ...ok, grant: { until: 'tomorrow' } }
    expect(parsePayload(decisionSchema, Buffer.from(JSON.stringify(wrong)))).toMatchObject({
      ok: false,
      reason: 'invalid-payload',
    })
  })

  it('pairing URIs round-trip and refuse anything short of a 256-bit key', () => {
    const p = {
      broker: 'mqtt://hub.local:1883',
      device: 'kitchen',
      prefix: 'nocturn/v1',
      phone: 'anna',
      key: newKey(),
    }
    const uri = pairingUri(p)
    expect(uri).toMatch(/^nocturn-pair:v1\?/)
    expect(parsePairingUri(uri)).toEqual(p)
    expect(() => parsePairingUri(uri.replace(/key=[^&]+/, 'key=AAAA'))).toThrow(/256 bits/)
    expect(() => parsePairingUri('https://example.com')).toThrow()
  })

  it('grants from the phone command line', () => {
    expect(parseGrant('once', 0)).toBe('once')
    expect(parseGrant('session', 0)).toBe('session')
    expect(parseGrant('2h', 1000)).toEqual({ until: 1000 + 7_200_000 })
    expect(() => parseGrant('forever', 0)).toThrow()
  })
})
