-- A permission's lasting choices ("don't ask again"), as the Worker built them from the
-- suggestions its request carries (`needs_you_core::lasting`): JSON, a list of
-- {id, label, lasting, rule, scope}. Null when it offers none.
ALTER TABLE questions ADD COLUMN decisions TEXT;

-- The lasting rules granted from afar: one for each answer that chose a lasting choice and
-- that the agent took, with who granted it and where it is kept. A rule in a settings file
-- outlives its task; taking it back (`revoke_asked_at`) goes to the task's relay, which
-- removes it from the file it was written to and says how that went (`ended_at`,
-- `end_reason`: 'revoked' or 'gone', `note`).
CREATE TABLE rules (
  id TEXT PRIMARY KEY,
  owner_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  question_id TEXT NOT NULL,
  answer_id TEXT NOT NULL UNIQUE,
  device_id TEXT,
  cli TEXT NOT NULL,
  host TEXT,
  rule TEXT NOT NULL,
  label TEXT NOT NULL,
  scope TEXT NOT NULL,
  granted_at INTEGER NOT NULL,
  revoke_asked_at INTEGER,
  ended_at INTEGER,
  end_reason TEXT,
  note TEXT
);
CREATE INDEX rules_of_task ON rules (task_id, granted_at);
CREATE INDEX rules_of_owner ON rules (owner_id, granted_at);
