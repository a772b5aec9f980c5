import { NocturnError } from '../core/errors.js'
import type { ApprovalEnding, ApprovalHistory } from '../ports/approval-history.js'
import type { PhoneRequestChannel } from '../ports/phone-requests.js'
import { grantOpArgSchemas } from '../protocol/grant-ops.js'
import { args } from '../protocol/op-args.js'

/** A page of the history a phone may ask for at once: small enough for a phone on a slow link. */
const DEFAULT_LIMIT = 50
const MAX_LIMIT = 200

/**
 * The approval history over MQTT (docs/protocol.md "History"): every ending — approved or denied
 * on which phone, withdrawn, expired — newest first, paged, on the phones' request channel.
 */
export function serveHistory(requests: PhoneRequestChannel, history: ApprovalHistory): void {
  requests.serve({
    history: (ask) => {
      const a = args(grantOpArgSchemas.history, ask.request.args)
      const limit = a.limit ?? DEFAULT_LIMIT
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
        throw new NocturnError(
          'NOC_ERR_BAD_REQUEST',
          `limit: expected a whole number from 1 to ${MAX_LIMIT}`,
        )
      }
      // One more than asked: whether another page exists, without a second query.
      const items = history.list({
        limit: limit + 1,
        ...(a.before !== undefined && { before: a.before }),
        ...(a.beforeId !== undefined && { beforeId: a.beforeId }),
      })
      const page = items.slice(0, limit)
      ask.items(page.map(wireEnding), (e) => ({ ...e, args: undefined, truncated: true }))
      const oldest = page.at(-1)
      ask.reply('done', {
        count: page.length,
        ...(items.length > limit &&
          oldest && { next: { before: oldest.endedAt, beforeId: oldest.id } }),
      })
    },
  })
}

/** An ending as a phone reads it: the protocol's field names. */
function wireEnding(e: ApprovalEnding): Record<string, unknown> {
  const { conversationId, ...rest } = e
  return { ...rest, ...(conversationId !== undefined && { conversation: conversationId }) }
}
