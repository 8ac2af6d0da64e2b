-- The answering device's signed statement (`needs_you_core::signed::Envelope`, as JSON),
-- kept as it came and passed on to the relay: the agent's machine checks it; the Worker cannot.
ALTER TABLE answers ADD COLUMN signed TEXT;
