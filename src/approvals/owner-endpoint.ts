import type { OwnerCheck } from '../ports/owner-check.js'
import type { PhoneRequestChannel } from '../ports/phone-requests.js'
import { args } from '../protocol/op-args.js'
import { ownerOpArgSchemas } from '../protocol/owner-ops.js'

/**
 * The owner's credential from a phone (docs/protocol.md, "The owner's yes"): `owner_status` says
 * whether the phone has one registered and hands out a fresh registration challenge;
 * `owner_register` registers what the browser made over it. Both signed on the phones' request
 * channel and verified before anything is looked at; the credential is checked by `owner`.
 */
export function serveOwner(requests: PhoneRequestChannel, owner: OwnerCheck): void {
  requests.serve({
    owner_status: (ask) => {
      args(ownerOpArgSchemas.owner_status, ask.request.args)
      ask.reply('done', owner.status(ask.request.phone))
    },
    owner_register: (ask) => {
      const a = args(ownerOpArgSchemas.owner_register, ask.request.args)
      owner.register(ask.request.phone, a.credential).then(
        ({ credentialId }) => ask.reply('done', { registered: true, credentialId }),
        (err: unknown) => ask.refuse(err),
      )
    },
  })
}
