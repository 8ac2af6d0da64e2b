-- Where each question's agent runs (the report's `terminal`, JSON), and whether
-- an answer can be typed into it from afar.
ALTER TABLE questions ADD COLUMN terminal TEXT;
ALTER TABLE questions ADD COLUMN answerable INTEGER NOT NULL DEFAULT 0;

-- Answers to reply questions, typed into the agent's terminal by the relay on its
-- machine. state: queued (stored), delivered (the relay has it), typed, failed
-- (with a reason a person understands). One answer on its way per question.
CREATE TABLE answers (
  id           TEXT PRIMARY KEY,
  question_id  TEXT NOT NULL,
  task_id      TEXT NOT NULL,
  owner_id     TEXT NOT NULL,
  text         TEXT NOT NULL,
  state        TEXT NOT NULL,
  reason       TEXT,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
CREATE UNIQUE INDEX answers_one_on_its_way ON answers(question_id) WHERE state IN ('queued', 'delivered');
CREATE INDEX answers_by_task ON answers(task_id, state);
CREATE INDEX answers_by_question ON answers(question_id);
