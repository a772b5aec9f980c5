import type { ApprovalBroadcast } from '../ports/approval-broadcast.js'
import type { ApprovalListener } from '../ports/approval-listener.js'

/**
 * Tells a broadcast (Web Push, the alert channels) each request and each outcome exactly as the
 * wire sent them, for phones that are not on the broker; what never went out is not broadcast.
 */
export function broadcastListener(broadcast: ApprovalBroadcast): ApprovalListener {
  return {
    sent: (request, { topic, message, phones }) =>
      broadcast.requested({ request, topic, message, phones }),
    ended({ request, state, outcome }) {
      if (state === 'failed' || !outcome) return
      const { topic, message, phones } = outcome
      broadcast.ended({ id: request.id, state, topic, message, phones })
    },
  }
}
