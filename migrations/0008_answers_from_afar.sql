-- What a question can take from afar, as its reporter said at the open: 'decision' (a
-- permission) or 'choices' (a dialog), with the digest of the request that an answer must
-- carry back, and a dialog's questions as asked (JSON). Null for older reports.
ALTER TABLE questions ADD COLUMN takes TEXT;
ALTER TABLE questions ADD COLUMN digest TEXT;
ALTER TABLE questions ADD COLUMN questions TEXT;
-- An answer's form ('text', 'decision', 'choices') and the answer itself as the relay hands
-- it on (JSON: {"text"} | {"decision", "message"?} | {"choices"}); `text` keeps what a person
-- reads of it. Who answered: the device, or null for the owner's token.
ALTER TABLE answers ADD COLUMN form TEXT NOT NULL DEFAULT 'text';
ALTER TABLE answers ADD COLUMN body TEXT;
ALTER TABLE answers ADD COLUMN device_id TEXT;
ALTER TABLE answers ADD COLUMN digest TEXT;
