import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/core/canonical.js'
import {
  decisionMacInput,
  requestDigest,
  requestMacInput,
  signDecision,
  signRequest,
  verifyDecisionMac,
  verifyRequestMac,
} from '../../src/protocol/index.js'

// The worked example in docs/protocol.md is the test: read the doc's vector block, check the code.
const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'protocol.md'), 'utf8')
const block = /```vector\n([\s\S]*?)```/.exec(doc)?.[1] ?? ''
const v = Object.fromEntries(
  block
    .trim()
    .split('\n')
    .map((line) => {
      const i = line.indexOf(': ')
      return [line.slice(0, i), line.slice(i + 2)]
    }),
) as Record<string, string>

const key = Buffer.from(v.key ?? '', 'hex')
const body = {
  v: 1,
  id: '7f3c9a4e-2b1d-4c8e-9f00-5a6b7c8d9e0f',
  device: 'kitchen',
  tool: 'unlock_door',
  action: 'unlock the front door',
  args: { door: 'front' },
  critical: true,
  channel: 'voice',
  conversation: 'conv-42',
  createdAt: 1764489600000,
  expiresAt: 1764489720000,
}
const decision = {
  id: body.id,
  decision: 'approve' as const,
  grant: 'session' as const,
  digest: v['request.digest'] ?? '',
  phone: 'anna',
  at: 1764489630000,
  nonce: 'q2VhZ3VsbC1ub25jZS0wMQ',
}

describe('protocol v1 test vector (docs/protocol.md)', () => {
  it('the doc has every value', () => {
    expect(key).toHaveLength(32)
    for (const k of ['request.canonical', 'request.digest', 'request.mac', 'decision.mac']) {
      expect(v[k], k).toMatch(/./)
    }
  })

  it('canonical JSON and digest', () => {
    expect(canonicalJson(body)).toBe(v['request.canonical'])
    expect(requestDigest(body)).toBe(v['request.digest'])
    // digest and macs are left out of what the digest covers
    expect(requestDigest({ ...body, digest: 'x', macs: { a: 'y' } })).toBe(v['request.digest'])
  })

  it('request MAC', () => {
    expect(requestMacInput(v['request.digest'] ?? '')).toBe(
      JSON.parse(v['request.mac.input'] ?? '""'),
    )
    expect(signRequest(key, v['request.digest'] ?? '')).toBe(v['request.mac'])
    expect(verifyRequestMac(key, v['request.digest'] ?? '', v['request.mac'] ?? '')).toBe(true)
  })

  it('decision MAC, and any changed field breaks it', () => {
    expect(decisionMacInput(decision)).toBe(JSON.parse(v['decision.mac.input'] ?? '""'))
    expect(signDecision(key, decision)).toBe(v['decision.mac'])
    const mac = v['decision.mac'] ?? ''
    expect(verifyDecisionMac(key, decision, mac)).toBe(true)
    expect(verifyDecisionMac(key, { ...decision, decision: 'deny' }, mac)).toBe(false)
    expect(verifyDecisionMac(key, { ...decision, grant: 'once' }, mac)).toBe(false)
    expect(verifyDecisionMac(key, { ...decision, at: decision.at + 1 }, mac)).toBe(false)
    expect(verifyDecisionMac(key, { ...decision, digest: '0'.repeat(64) }, mac)).toBe(false)
    expect(verifyDecisionMac(key, decision, mac.toUpperCase())).toBe(true)
    expect(verifyDecisionMac(key, decision, mac.slice(0, 62))).toBe(false)
  })
})
