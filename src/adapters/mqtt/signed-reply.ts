import { errorText } from '../../core/errors.js'
import type { Logger } from '../../core/logger.js'
import type { Clock } from '../../ports/clock.js'
import type { ReplyTo } from '../../ports/phone-requests.js'
import {
  MAX_PAYLOAD_BYTES,
  PROTOCOL_VERSION,
  type ReplyKind,
  signConversationReply,
  type Topics,
} from '../../protocol/index.js'
import type { MqttConnection } from './connection.js'

/** Where the device's signed answers to phones go out. */
export interface ReplyChannel {
  readonly connection: MqttConnection
  readonly topics: Topics
  readonly deviceId: string
  readonly clock: Clock
  readonly logger: Logger
}

/**
 * One signed answer on the phone's own reply topic (docs/protocol.md, "Conversations"), `n`-th for
 * what it answers; never retained. Used by the phones' request channel and by the approver, which
 * tells a phone why its yes was refused.
 */
export function sendReply(
  ch: ReplyChannel,
  to: ReplyTo,
  n: number,
  kind: ReplyKind,
  body: unknown,
): void {
  const { phone, key, re } = to
  const reply: Record<string, unknown> = {
    v: PROTOCOL_VERSION,
    re,
    device: ch.deviceId,
    phone,
    n,
    kind,
    body,
    at: ch.clock.now(),
  }
  // The MAC field adds 73 bytes.
  const bytes = Buffer.byteLength(JSON.stringify(reply)) + 80
  if (bytes > MAX_PAYLOAD_BYTES) {
    // Every path stays within budget; this is the last guard, so a phone never sees a gap.
    ch.logger.error(
      { event: 'reply_too_large', phone, requestId: re, kind, bytes },
      'reply too large: sent truncated',
    )
    reply.body = { truncated: true }
  }
  reply.mac = signConversationReply(key, JSON.parse(JSON.stringify(reply)))
  ch.connection
    .publish(ch.topics.conversationReply(phone), JSON.stringify(reply), { qos: 1 })
    .catch((err: unknown) =>
      ch.logger.warn(
        { event: 'reply_not_published', phone, requestId: re, kind, err: errorText(err) },
        'reply not published',
      ),
    )
}
