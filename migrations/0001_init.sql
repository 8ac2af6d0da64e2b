-- needs-you schema. Times are milliseconds since the Unix epoch.

-- A person. The token is shown once and stored only as its SHA-256.
CREATE TABLE owners (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  token_hash  TEXT NOT NULL UNIQUE,
  created_at  INTEGER NOT NULL
);

-- One agent terminal, with its own credential (stored as SHA-256).
CREATE TABLE tasks (
  id              TEXT PRIMARY KEY,
  owner_id        TEXT NOT NULL REFERENCES owners(id),
  name            TEXT NOT NULL,
  credential_hash TEXT NOT NULL UNIQUE,
  created_at      INTEGER NOT NULL,
  expires_at      INTEGER,
  revoked_at      INTEGER,
  last_report_at  INTEGER
);
CREATE INDEX tasks_by_owner ON tasks(owner_id);

-- Per (task, session): the last applied seq, and which request applied it, so the
-- statements of one report's batch can tell whether they are still the newest.
CREATE TABLE sessions (
  task_id     TEXT NOT NULL,
  session     TEXT NOT NULL,
  last_seq    INTEGER NOT NULL,
  applied_id  TEXT NOT NULL,
  cli         TEXT NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (task_id, session)
);

-- Questions, open and closed. Closed ones are deleted by the cron after 30 days.
CREATE TABLE questions (
  id                TEXT PRIMARY KEY,
  owner_id          TEXT NOT NULL,
  task_id           TEXT NOT NULL,
  session           TEXT NOT NULL,
  cli               TEXT NOT NULL,
  kind              TEXT NOT NULL,
  text              TEXT NOT NULL,
  options           TEXT NOT NULL,   -- JSON array
  opened_at         INTEGER NOT NULL,
  open_seq          INTEGER NOT NULL,
  closed_at         INTEGER,
  close_reason      TEXT,
  notified_at       INTEGER
);
-- The "Needs you" list reads only open questions: this index holds nothing else,
-- so it stays small however many closed questions pile up.
CREATE INDEX questions_open_by_owner ON questions(owner_id, opened_at DESC) WHERE closed_at IS NULL;
-- At most one open question per (task, session); also serves the report's look-ups.
CREATE UNIQUE INDEX questions_open_by_session ON questions(task_id, session) WHERE closed_at IS NULL;
-- For the cron's clean-up.
CREATE INDEX questions_closed_at ON questions(closed_at) WHERE closed_at IS NOT NULL;

-- Where an owner is notified: kind is 'ntfy' or 'webhook', config is JSON.
CREATE TABLE channels (
  owner_id    TEXT NOT NULL,
  kind        TEXT NOT NULL,
  config      TEXT NOT NULL,
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (owner_id, kind)
);

-- Every delivery attempt: event is 'open' (the notification) or 'close'.
CREATE TABLE deliveries (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  question_id  TEXT NOT NULL,
  channel      TEXT NOT NULL,
  event        TEXT NOT NULL,
  attempt      INTEGER NOT NULL,
  at           INTEGER NOT NULL,
  ok           INTEGER NOT NULL,
  status       INTEGER,
  error        TEXT
);
CREATE INDEX deliveries_by_question ON deliveries(question_id, channel, event);
