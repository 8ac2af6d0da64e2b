-- An answer from afar is spent once, on the one question it was made for.
--
-- Why it failed, for programs (`needs_you_core::afar::Refusal::code` and the
-- Worker's own: `closed`, `revoked`, `rotated`), beside the reason for people.
ALTER TABLE answers ADD COLUMN reason_code TEXT;

-- The `seq` of the open its question had when the answer was made: the
-- agent's machine hands it on only while that is its own open.
ALTER TABLE answers ADD COLUMN open_seq INTEGER;

-- When a question closes, whatever closes it (a report, a newer open, a
-- dismissal, its task revoked or expired), every answer to it still on its
-- way fails in the same statement, and is never sent again. The agent's
-- machine may still say it took one it had (the relay's word arrived after
-- the close that its taking caused): `store::answers::MARK` lets that through.
CREATE TRIGGER answers_fail_with_their_question
AFTER UPDATE OF closed_at ON questions
WHEN OLD.closed_at IS NULL AND NEW.closed_at IS NOT NULL
BEGIN
  UPDATE answers
  SET state = 'failed', reason = 'the question closed before the agent took the answer',
      reason_code = 'closed', updated_at = NEW.closed_at
  WHERE question_id = NEW.id AND state IN ('queued', 'delivered');
END;

-- A ring made quiet because someone was looking at the page says so in the
-- list: the name of the device whose presence quieted it.
ALTER TABLE questions ADD COLUMN quieted_by TEXT;
