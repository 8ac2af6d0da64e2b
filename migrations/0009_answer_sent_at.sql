-- When the task's relay object sent the answer to a connected relay. Once
-- sent, an answer may be acted on by the agent's machine at any moment, so
-- it can no longer be taken back or replaced (its state moves only when the
-- relay reports). Null: never sent.
ALTER TABLE answers ADD COLUMN sent_at INTEGER;
