-- A question whose words were sealed on the agent's machine: `sealed` holds them (a `s1.…` text
-- the server cannot open), `same` the keyed hash that tells the same question reported again
-- from another, in place of comparing its text. A rule granted on it keeps its choice's id as
-- `sealed_scope`, the scope its sealed words (in `rule`) open in; null for a rule in the clear.
ALTER TABLE questions ADD COLUMN sealed TEXT;
ALTER TABLE questions ADD COLUMN same TEXT;
-- What a Web Push shows of it, sealed apart for the page's service worker to open.
ALTER TABLE questions ADD COLUMN summary TEXT;
ALTER TABLE rules ADD COLUMN sealed_scope TEXT;
