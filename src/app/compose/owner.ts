import { WebAuthnOwners } from '../../adapters/webauthn/webauthn-owners.js'
import type { OwnerCredentialStore } from '../../ports/owner-credentials.js'
import type { PhoneKeys } from '../../protocol/phone-verifier.js'
import { phoneAppUrl } from '../phone-app.js'
import type { Composition } from './composition.js'

/**
 * The owner's yes (docs/protocol.md, "The owner's yes"): WebAuthn credentials registered from the
 * app, for the relying party the app is served as — its public host name, at its own origin
 * (`phoneApp.publicHost`, port, HTTPS). Credentials of phones revoked while the device was
 * stopped are forgotten at once.
 */
export function composeOwnerCheck(
  { config: c, clock, log }: Composition,
  store: OwnerCredentialStore,
  phones: PhoneKeys,
): WebAuthnOwners {
  const app = new URL(phoneAppUrl(c))
  const owners = new WebAuthnOwners({
    store,
    phones,
    party: { origin: app.origin, rpId: app.hostname },
    required: c.mqtt?.ownerCheck === 'always',
    clock,
    logger: log,
  })
  owners.prune()
  return owners
}
