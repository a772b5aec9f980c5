import type Database from 'better-sqlite3'
import type { OwnerCredential, OwnerCredentialStore } from '../../ports/owner-credentials.js'
import type { Columns } from './columns.js'

/** The credential's own columns, but for its id and key, kept as `credential_id` and a BLOB. */
type CredentialRow = Columns<Omit<OwnerCredential, 'id' | 'publicKey'>> & {
  credential_id: string
  public_key: Buffer
}

/** The phones' WebAuthn credentials on the store's own database (migration 8), one per phone. */
export class SqliteOwnerCredentials implements OwnerCredentialStore {
  readonly #q

  constructor(db: Database.Database) {
    this.#q = {
      get: db.prepare('SELECT * FROM owner_credentials WHERE phone = ?'),
      put: db.prepare(
        `INSERT INTO owner_credentials (phone, credential_id, public_key, counter, key_tag, created_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (phone) DO UPDATE SET credential_id = excluded.credential_id,
           public_key = excluded.public_key, counter = excluded.counter,
           key_tag = excluded.key_tag, created_at = excluded.created_at`,
      ),
      // Compare and set in one statement: two assertions checked at once cannot both move it.
      advance: db.prepare(
        'UPDATE owner_credentials SET counter = ? WHERE phone = ? AND credential_id = ? AND counter < ?',
      ),
      remove: db.prepare('DELETE FROM owner_credentials WHERE phone = ?'),
      phones: db.prepare('SELECT phone FROM owner_credentials ORDER BY phone'),
    }
  }

  ownerCredential(phone: string): OwnerCredential | undefined {
    const r = this.#q.get.get(phone) as CredentialRow | undefined
    if (!r) return undefined
    return {
      phone: r.phone,
      id: r.credential_id,
      publicKey: new Uint8Array(r.public_key),
      counter: r.counter,
      keyTag: r.key_tag,
      createdAt: r.created_at,
    }
  }

  putOwnerCredential(c: OwnerCredential): void {
    this.#q.put.run(c.phone, c.id, Buffer.from(c.publicKey), c.counter, c.keyTag, c.createdAt)
  }

  advanceOwnerCounter(phone: string, id: string, counter: number): boolean {
    return this.#q.advance.run(counter, phone, id, counter).changes > 0
  }

  removeOwnerCredential(phone: string): boolean {
    return this.#q.remove.run(phone).changes > 0
  }

  ownerPhones(): string[] {
    return (this.#q.phones.all() as Array<{ phone: string }>).map((r) => r.phone)
  }
}
