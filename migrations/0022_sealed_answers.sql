-- An answer to a question whose words are sealed: `sealed` holds its words (a reply's text, a
-- denial's message, choices) as the device that made it sealed them, a `s1.…` text the server
-- cannot open; `text` and `body` then hold its form alone (and a decision's allow or deny).
ALTER TABLE answers ADD COLUMN sealed TEXT;
