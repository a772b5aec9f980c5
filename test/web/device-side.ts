import type { MqttClient } from 'mqtt'
import { digestOf } from '../../src/core/canonical.js'
import type { ApprovalDecision } from '../../src/ports/approver.js'
import type { PhoneWorld } from '../phone/world.js'

/** Everything published under the device's topics, as the broker delivered it to a bystander. */
export async function recordBroker(w: PhoneWorld): Promise<{
  messages: Array<{ topic: string; text: string; retain: boolean }>
  client: MqttClient
  json(suffix: string): Array<Record<string, unknown>>
}> {
  const client = await w.raw()
  const messages: Array<{ topic: string; text: string; retain: boolean }> = []
  client.on('message', (topic, payload, packet) =>
    messages.push({ topic, text: payload.toString('utf8'), retain: packet.retain }),
  )
  await client.subscribeAsync(`${w.topics.base}/#`, { qos: 1 })
  return {
    messages,
    client,
    json: (suffix) =>
      messages
        .filter((m) => m.topic.endsWith(suffix) && m.text !== '')
        .map((m) => JSON.parse(m.text) as Record<string, unknown>),
  }
}

let counter = 0

/**
 * The device's real MQTT approver asks the paired phones, as the gate does; the test decides the
 * deadline. Resolves with the decision, or rejects as the approver does (withdrawn, expired).
 */
export function ask(
  w: PhoneWorld,
  o: {
    tool?: string
    action?: string
    args?: unknown
    critical?: boolean
    expiresInMs?: number
    signal?: AbortSignal
    /** '' asks outside any conversation (a timer's action, an automation). */
    conversationId?: string
    /** The words that led to the call, as said in the room. */
    said?: string
  } = {},
): { id: string; decision: Promise<ApprovalDecision> } {
  const id = `web-${Date.now().toString(36)}-${counter++}`
  const args = o.args ?? { room: 'hall' }
  const now = Date.now()
  const decision = w.approver.request(
    {
      id,
      tool: o.tool ?? 'set_light',
      action: o.action ?? 'switch on the hall light',
      args,
      argsDigest: digestOf(args),
      channel: 'voice',
      conversationId: o.conversationId ?? 'conv-web',
      critical: o.critical ?? false,
      ...(o.said !== undefined && { said: o.said }),
      createdAt: now,
      expiresAt: now + (o.expiresInMs ?? 60_000),
    },
    // Asked without a gate, this plays its part: the deadline is the caller's (ports/approver.ts).
    o.signal ?? AbortSignal.timeout(o.expiresInMs ?? 60_000),
  )
  decision.catch(() => {})
  return { id, decision }
}

/** An unsigned request body as the device builds it (spoken, unlock the front door), to forge. */
export function doorRequestBody(
  w: PhoneWorld,
  id: string,
  over: Record<string, unknown> = {},
): Record<string, unknown> & { id: string } {
  const now = Date.now()
  return {
    v: 1,
    id,
    device: w.deviceId,
    tool: 'unlock_door',
    action: 'unlock the front door',
    args: { door: 'front' },
    critical: true,
    channel: 'voice',
    createdAt: now,
    expiresAt: now + 60_000,
    ...over,
  }
}

/** A spoken conversation stored a minute ago, one question and its answer; returns its id. */
export function storedExchange(w: PhoneWorld, question: string, answer: string): string {
  const c = w.feed.createConversation({ channel: 'voice', at: Date.now() - 60_000 })
  w.feed.append(c.id, { role: 'user', text: question, channel: 'voice', at: Date.now() - 59_000 })
  w.feed.append(c.id, {
    role: 'assistant',
    text: answer,
    toolCalls: [],
    channel: 'voice',
    at: Date.now() - 58_000,
  })
  return c.id
}
