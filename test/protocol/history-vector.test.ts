import { describe, expect, it } from 'vitest'
import {
  conversationReplyMacInput,
  conversationReplySchema,
  signConversationReply,
  verifyConversationReply,
} from '../../src/protocol/index.js'
import { docJsonBlocks, docVector } from '../helpers/protocol-doc.js'

// The worked example in docs/protocol.md ("History"): a call a grant allowed, as a `history` reply
// carries it, read from the doc and checked against the code.
const v = docVector('history-vector')
const [example] = docJsonBlocks('## History', '## Speaker settings')
const reply = JSON.parse(example ?? '{}') as Record<string, unknown>
const key = Buffer.from(v.key ?? '', 'hex')

describe('history test vector (docs/protocol.md)', () => {
  it('the doc has every value, and its example is a reply with an ending a grant allowed', () => {
    expect(key).toHaveLength(32)
    for (const k of ['reply.mac.input', 'reply.mac']) expect(v[k], k).toMatch(/./)
    expect(conversationReplySchema.safeParse(reply).success).toBe(true)
    const [ending] = (reply.body as { items: Record<string, unknown>[] }).items
    expect(ending).toMatchObject({ state: 'approved', by: 'anna' })
    expect(ending?.coveredBy).toMatchObject({ by: 'anna', expiry: 'until' })
    expect(ending?.askedAt).toBe(ending?.endedAt)
    expect(ending).not.toHaveProperty('grant')
  })

  it('reply MAC over everything but the MAC, coveredBy included', () => {
    expect(conversationReplyMacInput(reply)).toBe(JSON.parse(v['reply.mac.input'] ?? '""'))
    expect(signConversationReply(key, reply)).toBe(v['reply.mac'])
    expect(verifyConversationReply(key, reply, String(reply.mac))).toBe(true)
    const body = reply.body as { items: Record<string, unknown>[] }
    const changed = {
      ...reply,
      body: {
        items: body.items.map((e) => ({
          ...e,
          coveredBy: { ...(e.coveredBy as object), by: 'ben' },
        })),
      },
    }
    expect(verifyConversationReply(key, changed, String(reply.mac))).toBe(false)
  })
})
