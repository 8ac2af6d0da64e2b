-- The history (GET /v1/history) reads an owner's questions, open and closed,
-- newest first, a page at a time; the list's index holds open ones only.
CREATE INDEX questions_by_owner ON questions(owner_id, opened_at DESC, id DESC);
