-- The request a question that takes an answer from afar was opened for, as its CLI gave it
-- (`needs_you_core::request::Request`, JSON): a device builds the card itself from it, with the
-- same code, and signs the digest it computes, never the words or the digest the Worker shows.
ALTER TABLE questions ADD COLUMN request TEXT;
