import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/core/canonical-json.js'
import { requestMacText } from '../../src/protocol/forms.js'
import {
  decisionMacInput,
  outcomeMacInput,
  outcomeSchema,
  parsePayload,
  requestDigest,
  signDecision,
  signOutcome,
  signRequest,
  verifyDecisionMac,
  verifyOutcomeMac,
  verifyRequestMac,
} from '../../src/protocol/index.js'
import {
  docVector,
  PROTOCOL_DOC,
  VECTOR_DECISION,
  VECTOR_REQUEST,
} from '../helpers/protocol-doc.js'

// The worked example in docs/protocol.md is the test: read the doc's vector block, check the code.
const v = docVector('vector')

const key = Buffer.from(v.key ?? '', 'hex')
const body = VECTOR_REQUEST
const decision = VECTOR_DECISION

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
    expect(requestMacText(v['request.digest'] ?? '')).toBe(
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

  it('outcome MAC over the example outcome and the request digest; any changed field breaks it', () => {
    const example = /### Outcome[^\n]*\n\n```json\n(.*)\n```/.exec(PROTOCOL_DOC)?.[1] ?? ''
    const parsed = parsePayload(outcomeSchema, Buffer.from(example))
    if (!parsed.ok) throw new Error(`the doc's outcome example does not parse: ${parsed.reason}`)
    const o = { ...parsed.value, digest: v['request.digest'] ?? '' }
    expect(outcomeMacInput(o)).toBe(JSON.parse(v['outcome.mac.input'] ?? '""'))
    expect(signOutcome(key, o)).toBe(v['outcome.mac'])
    expect(parsed.value.macs?.anna).toBe(v['outcome.mac'])
    const mac = v['outcome.mac'] ?? ''
    expect(verifyOutcomeMac(key, o, mac)).toBe(true)
    expect(verifyOutcomeMac(key, { ...o, state: 'denied' }, mac)).toBe(false)
    expect(verifyOutcomeMac(key, { ...o, grant: 'session' }, mac)).toBe(false)
    expect(verifyOutcomeMac(key, { ...o, by: undefined }, mac)).toBe(false)
    expect(verifyOutcomeMac(key, { ...o, at: o.at + 1 }, mac)).toBe(false)
    expect(verifyOutcomeMac(key, { ...o, digest: '0'.repeat(64) }, mac)).toBe(false)
    // Absent `by` and `grant` are empty lines, and an "until" grant is written until:<ms>.
    expect(outcomeMacInput({ id: 'x', state: 'expired', at: 5, digest: 'd' })).toBe(
      'nocturn-outcome-v1\nx\nexpired\n\n\n5\nd',
    )
    expect(
      outcomeMacInput({
        id: 'x',
        state: 'approved',
        by: 'p',
        grant: { until: 9 },
        at: 5,
        digest: 'd',
      }),
    ).toBe('nocturn-outcome-v1\nx\napproved\np\nuntil:9\n5\nd')
  })
})
