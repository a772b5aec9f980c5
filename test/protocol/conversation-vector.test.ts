import { describe, expect, it } from 'vitest'
import {
  conversationReplyMacInput,
  conversationReplySchema,
  conversationRequestMacInput,
  conversationRequestSchema,
  signConversationReply,
  signConversationRequest,
  verifyConversationReply,
  verifyConversationRequest,
} from '../../src/protocol/index.js'
import { docJsonBlocks, docVector } from '../helpers/protocol-doc.js'

// The worked example in docs/protocol.md ("Conversations") is the test: the doc's JSON examples
// and its vector block are read from the doc itself and checked against the code.
const v = docVector('conversation-vector')
const jsonBlocks = docJsonBlocks('## Conversations')
const request = JSON.parse(jsonBlocks[0] ?? '{}') as Record<string, unknown>
const reply = JSON.parse(jsonBlocks[2] ?? '{}') as Record<string, unknown>
const key = Buffer.from(v.key ?? '', 'hex')

describe('conversations test vector (docs/protocol.md)', () => {
  it('the doc has every value, and its examples fit the schemas', () => {
    expect(key).toHaveLength(32)
    for (const k of ['request.mac.input', 'request.mac', 'reply.mac.input', 'reply.mac']) {
      expect(v[k], k).toMatch(/./)
    }
    expect(conversationRequestSchema.safeParse(request).success).toBe(true)
    expect(conversationReplySchema.safeParse(reply).success).toBe(true)
  })

  it('request MAC, and any changed field breaks it', () => {
    const r = conversationRequestSchema.parse(request)
    expect(conversationRequestMacInput(r)).toBe(JSON.parse(v['request.mac.input'] ?? '""'))
    expect(signConversationRequest(key, r)).toBe(v['request.mac'])
    expect(r.mac).toBe(v['request.mac'])
    expect(verifyConversationRequest(key, r, r.mac)).toBe(true)
    expect(verifyConversationRequest(key, { ...r, op: 'delete' }, r.mac)).toBe(false)
    expect(verifyConversationRequest(key, { ...r, args: { ...r.args, text: 'x' } }, r.mac)).toBe(
      false,
    )
    expect(verifyConversationRequest(key, { ...r, at: r.at + 1 }, r.mac)).toBe(false)
    expect(verifyConversationRequest(key, { ...r, device: 'hall' }, r.mac)).toBe(false)
    // Key order in args does not matter: the MAC is over canonical JSON.
    const reordered = { ...r, args: { text: r.args.text, conversation: r.args.conversation } }
    expect(verifyConversationRequest(key, reordered, r.mac)).toBe(true)
  })

  it('reply MAC over everything but the MAC', () => {
    expect(conversationReplyMacInput(reply)).toBe(JSON.parse(v['reply.mac.input'] ?? '""'))
    expect(signConversationReply(key, reply)).toBe(v['reply.mac'])
    expect(verifyConversationReply(key, reply, String(reply.mac))).toBe(true)
    expect(verifyConversationReply(key, { ...reply, n: 1 }, String(reply.mac))).toBe(false)
    expect(verifyConversationReply(key, { ...reply, extra: 1 }, String(reply.mac))).toBe(false)
  })
})
