import { describe, expect, it } from 'vitest'
import {
  grantSummarySchema,
  phoneRequestSchema,
  signPhoneRequest,
  verifyPhoneRequest,
} from '../../src/protocol/grant-ops.js'
import {
  conversationReplyMacInput,
  conversationReplySchema,
  conversationRequestMacInput,
  conversationRequestSchema,
  signConversationReply,
  verifyConversationReply,
} from '../../src/protocol/index.js'
import { docJsonBlocks, docVector } from '../helpers/protocol-doc.js'

// The worked example in docs/protocol.md ("Grants") is the test: its JSON examples and its vector
// block are read from the doc itself and checked against the code.
const v = docVector('grants-vector')
const jsonBlocks = docJsonBlocks('## Grants', '## Pairing')
const reply = JSON.parse(jsonBlocks[0] ?? '{}') as Record<string, unknown>
const request = JSON.parse(jsonBlocks[1] ?? '{}') as Record<string, unknown>
const key = Buffer.from(v.key ?? '', 'hex')

describe('grants test vector (docs/protocol.md)', () => {
  it('the doc has every value, and its examples fit the schemas', () => {
    expect(key).toHaveLength(32)
    for (const k of ['request.mac.input', 'request.mac', 'reply.mac.input', 'reply.mac']) {
      expect(v[k], k).toMatch(/./)
    }
    expect(phoneRequestSchema.safeParse(request).success).toBe(true)
    // A device before this revision refuses the op by its schema (no answer): compatible.
    expect(conversationRequestSchema.safeParse(request).success).toBe(false)
    expect(conversationReplySchema.safeParse(reply).success).toBe(true)
    const items = (reply.body as { items: unknown[] }).items
    for (const g of items) expect(grantSummarySchema.strict().safeParse(g).success).toBe(true)
  })

  it('request MAC is the conversation request MAC, with the op as one of its lines', () => {
    const r = phoneRequestSchema.parse(request)
    expect(
      conversationRequestMacInput({ ...r, op: 'list' }).replace('\nlist\n', '\nrevoke\n'),
    ).toBe(JSON.parse(v['request.mac.input'] ?? '""'))
    expect(signPhoneRequest(key, r)).toBe(v['request.mac'])
    expect(r.mac).toBe(v['request.mac'])
    expect(verifyPhoneRequest(key, r, r.mac)).toBe(true)
    expect(verifyPhoneRequest(key, { ...r, op: 'grants' }, r.mac)).toBe(false)
    expect(verifyPhoneRequest(key, { ...r, args: { grant: 'other' } }, r.mac)).toBe(false)
  })

  it('reply MAC over everything but the MAC', () => {
    expect(conversationReplyMacInput(reply)).toBe(JSON.parse(v['reply.mac.input'] ?? '""'))
    expect(signConversationReply(key, reply)).toBe(v['reply.mac'])
    expect(verifyConversationReply(key, reply, String(reply.mac))).toBe(true)
  })
})
