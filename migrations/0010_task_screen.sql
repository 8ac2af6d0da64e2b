-- Whether a task's panes may be shown (Show terminal): `needs-you run --no-screen`
-- starts one without. Tasks made before keep what every task could do then: 1.
ALTER TABLE tasks ADD COLUMN screen INTEGER NOT NULL DEFAULT 1;
