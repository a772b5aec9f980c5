import type Database from 'better-sqlite3'
import type {
  PushSubscriptionStore,
  StoredPushSubscription,
} from '../../ports/push-subscriptions.js'
import type { Columns } from './columns.js'

type SubscriptionRow = Columns<StoredPushSubscription>

/**
 * The phones' Web Push subscriptions on the store's own database (migration 6). An endpoint is one
 * subscription: registered again (by the same phone or, after a re-pairing, another) it is replaced.
 */
export class SqlitePushSubscriptions implements PushSubscriptionStore {
  readonly #q

  constructor(db: Database.Database) {
    this.#q = {
      put: db.prepare(
        `INSERT INTO push_subscriptions (endpoint, phone, p256dh, auth, created_at)
         VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (endpoint) DO UPDATE SET phone = excluded.phone, p256dh = excluded.p256dh,
           auth = excluded.auth, created_at = excluded.created_at`,
      ),
      remove: db.prepare('DELETE FROM push_subscriptions WHERE phone = ? AND endpoint = ?'),
      removePhone: db.prepare('DELETE FROM push_subscriptions WHERE phone = ?'),
      all: db.prepare('SELECT * FROM push_subscriptions ORDER BY created_at, endpoint'),
      ofPhone: db.prepare(
        'SELECT * FROM push_subscriptions WHERE phone = ? ORDER BY created_at, endpoint',
      ),
    }
  }

  putPushSubscription(s: StoredPushSubscription): void {
    this.#q.put.run(s.endpoint, s.phone, s.p256dh, s.auth, s.createdAt)
  }

  removePushSubscription(phone: string, endpoint: string): boolean {
    return this.#q.remove.run(phone, endpoint).changes > 0
  }

  pushSubscriptions(phone?: string): StoredPushSubscription[] {
    const rows = (
      phone === undefined ? this.#q.all.all() : this.#q.ofPhone.all(phone)
    ) as SubscriptionRow[]
    return rows.map((r) => ({
      endpoint: r.endpoint,
      phone: r.phone,
      p256dh: r.p256dh,
      auth: r.auth,
      createdAt: r.created_at,
    }))
  }

  removePhonePushSubscriptions(phone: string): number {
    return this.#q.removePhone.run(phone).changes
  }
}
