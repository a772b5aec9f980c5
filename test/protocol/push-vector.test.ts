import { describe, expect, it } from 'vitest'
import {
  type PhoneRequestFields,
  phoneRequestMacInput,
  phoneRequestSchema,
  signPhoneRequest,
} from '../../src/protocol/grant-ops.js'
import { pushEnvelope, pushOpArgSchemas } from '../../src/protocol/push-ops.js'
import { docJsonBlocks, docVector } from '../helpers/protocol-doc.js'

describe('docs/protocol.md, "Push to a phone in a pocket"', () => {
  const v = docVector('push-vector')
  const key = Buffer.from(v.key ?? '', 'hex')
  const request = JSON.parse(v.request ?? '{}') as PhoneRequestFields

  it('the push_subscribe vector: its MAC input and MAC are what the device computes', () => {
    expect(phoneRequestSchema.safeParse({ v: 1, ...request, mac: '0'.repeat(64) }).success).toBe(
      true,
    )
    expect(pushOpArgSchemas.push_subscribe.safeParse(request.args).success).toBe(true)
    expect(JSON.stringify(phoneRequestMacInput(request))).toBe(v['request.mac.input'])
    expect(signPhoneRequest(key, request)).toBe(v['request.mac'])
  })

  it('the push example is what the device builds, the message embedded byte for byte', () => {
    const [example] = docJsonBlocks(
      '## Push to a phone in a pocket',
      '### Alerts that carry no authority',
    )
    const parsed = JSON.parse(example ?? '{}') as Record<string, unknown>
    const message = JSON.stringify(parsed.message)
    const built = pushEnvelope({
      kind: 'outcome',
      device: String(parsed.device),
      id: String(parsed.id),
      topic: String(parsed.topic),
      message,
    })
    expect(built).toBe(example?.trim())
  })
})
