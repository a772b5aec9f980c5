/**
 * Schema migrations, applied in order inside one transaction each; `PRAGMA user_version` records
 * how far a database has come. Never edit a released migration: add the next one.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: conversations, append-only messages, grants.
  `
  CREATE TABLE conversations (
    id          TEXT PRIMARY KEY,
    channel     TEXT NOT NULL CHECK (channel IN ('voice', 'text')),
    title       TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
  );
  CREATE INDEX conversations_by_activity ON conversations (updated_at DESC);

  CREATE TABLE messages (
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    seq             INTEGER NOT NULL,
    role            TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool')),
    channel         TEXT NOT NULL CHECK (channel IN ('voice', 'text')),
    text            TEXT NOT NULL DEFAULT '',
    tool_calls      TEXT,
    tool_call_id    TEXT,
    tool_name       TEXT,
    tool_args       TEXT,
    outcome         TEXT,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, seq)
  ) WITHOUT ROWID;

  CREATE TABLE grants (
    id          TEXT PRIMARY KEY,
    tool        TEXT NOT NULL,
    channel     TEXT NOT NULL CHECK (channel IN ('voice', 'text')),
    scope       TEXT NOT NULL,
    expiry      TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
  );
  CREATE INDEX grants_by_tool ON grants (tool) WHERE revoked_at IS NULL;
  `,
  // 2: timers and alarms, kept so they ring (or are reported missed) after a restart.
  `
  CREATE TABLE timers (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('timer', 'alarm')),
    label       TEXT,
    due_at      INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    finished_at INTEGER,
    outcome     TEXT CHECK (outcome IN ('rang', 'cancelled', 'missed'))
  );
  CREATE INDEX timers_pending ON timers (due_at) WHERE finished_at IS NULL;
  `,
  // 3: every ending of an approval, for the phone's History (ports/approval-history.ts).
  `
  CREATE TABLE approval_history (
    id              TEXT PRIMARY KEY,
    tool            TEXT NOT NULL,
    action          TEXT NOT NULL,
    args            TEXT,
    critical        INTEGER NOT NULL,
    channel         TEXT NOT NULL CHECK (channel IN ('voice', 'text')),
    conversation_id TEXT,
    asked_by        TEXT,
    state           TEXT NOT NULL CHECK (state IN ('approved', 'denied', 'withdrawn', 'expired')),
    decided_by      TEXT,
    grant_kept      TEXT,
    asked_at        INTEGER NOT NULL,
    ended_at        INTEGER NOT NULL
  );
  CREATE INDEX approval_history_by_end ON approval_history (ended_at DESC, id);
  `,
  // 4: the device's remembered settings (the volume), one row each.
  `
  CREATE TABLE settings (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  `,
  // 5: what each spoken session cost, in the model's tokens (ports/transcript-store.ts). A deleted
  // conversation leaves its cost behind: the tokens were billed all the same.
  `
  CREATE TABLE usage (
    conversation_id TEXT REFERENCES conversations (id) ON DELETE SET NULL,
    at              INTEGER NOT NULL,
    tokens          INTEGER NOT NULL CHECK (tokens >= 0)
  );
  CREATE INDEX usage_by_time ON usage (at);
  CREATE INDEX usage_by_conversation ON usage (conversation_id);
  `,
  // 6: each paired phone's Web Push subscriptions (ports/push-subscriptions.ts).
  `
  CREATE TABLE push_subscriptions (
    endpoint   TEXT PRIMARY KEY,
    phone      TEXT NOT NULL,
    p256dh     TEXT NOT NULL,
    auth       TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX push_subscriptions_by_phone ON push_subscriptions (phone);
  `,
  // 7: the words that led to an approval (docs/protocol.md, "What was said"), kept with its ending.
  `
  ALTER TABLE approval_history ADD COLUMN said TEXT;
  `,
  // 8: each paired phone's WebAuthn credential, for the owner's yes (ports/owner-credentials.ts).
  `
  CREATE TABLE owner_credentials (
    phone         TEXT PRIMARY KEY,
    credential_id TEXT NOT NULL,
    public_key    BLOB NOT NULL,
    counter       INTEGER NOT NULL CHECK (counter >= 0),
    key_tag       TEXT NOT NULL,
    created_at    INTEGER NOT NULL
  );
  `,
  // 9: who typed a typed message (a paired phone's id), so the phone's Chats show who said what
  // (issue 44). Rows kept before it have none and read as before.
  `
  ALTER TABLE messages ADD COLUMN typed_by TEXT;
  `,
  // 10: the grant that allowed a call without asking (ports/approval-history.ts, coveredBy), so the
  // History shows what a remembered yes allowed (issue 44). Endings kept before it have none.
  `
  ALTER TABLE approval_history ADD COLUMN covered_by TEXT;
  `,
  // 11: the devices a call acted on (Home Assistant entity ids), so the History can say which
  // lamp a remembered yes switched. Endings kept before it have none.
  `
  ALTER TABLE approval_history ADD COLUMN targets TEXT;
  `,
  // 12: the speaker's recent wakes (ports/wake-log.ts; docs/wake-word.md, "Teaching it"): when,
  // how sure, the second opinion, the first words heard, the household's mark, and the head's input
  // windows (float32, `window_floats` each) — features, never audio. Bounded on every insert.
  `
  CREATE TABLE wakes (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT NOT NULL CHECK (kind IN ('wake', 'missed')),
    at            INTEGER NOT NULL,
    phrase        TEXT NOT NULL,
    score         REAL NOT NULL,
    confirmed     TEXT NOT NULL,
    said          TEXT,
    mark          TEXT,
    marked_by     TEXT,
    marked_at     INTEGER,
    window_floats INTEGER NOT NULL,
    features      BLOB
  );
  CREATE INDEX wakes_by_time ON wakes (at);
  `,
  // 13: the local check's verdict on each wake ('agreed' or 'refused'), gating or in shadow
  // (docs/wake-word.md, "The local second opinion"). Wakes kept before it have none.
  `
  ALTER TABLE wakes ADD COLUMN local TEXT;
  `,
]
