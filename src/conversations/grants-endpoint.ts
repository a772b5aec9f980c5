import type { PhoneRequestChannel } from '../ports/phone-requests.js'
import { grantOpArgSchemas } from '../protocol/grant-ops.js'
import { args } from '../protocol/op-args.js'
import type { PhoneGrants } from './phone-grants.js'

/**
 * Grants over MQTT (docs/protocol.md "Grants"): a paired phone lists the grants in force and
 * revokes any of them, on the phones' request channel.
 */
export function serveGrants(requests: PhoneRequestChannel, grants: PhoneGrants): void {
  requests.serve({
    grants: (ask) => {
      args(grantOpArgSchemas.grants, ask.request.args)
      const items = grants.list()
      ask.items(items, (g) => ({ ...g, args: undefined, truncated: true }))
      ask.reply('done', { count: items.length })
    },
    revoke: (ask) => {
      const a = args(grantOpArgSchemas.revoke, ask.request.args)
      grants.revoke(a.grant, ask.request.phone)
      ask.reply('done', { revoked: a.grant })
    },
  })
}
