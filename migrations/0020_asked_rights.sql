-- What a device asked to be able to do when it paired (bits, as `rights`), beside what it got: the
-- pairing's proof covers what it asked for, so that its pairer signs no certificate for more than
-- the device itself asked, whatever the server says it got.
ALTER TABLE devices ADD COLUMN asked_rights INTEGER;
