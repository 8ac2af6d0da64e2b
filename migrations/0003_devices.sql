-- Devices an owner paired (a browser, a command line): each has its own credential,
-- stored only as its SHA-256, and acts for its owner on the page's routes.
CREATE TABLE devices (
  id          TEXT PRIMARY KEY,
  owner_id    TEXT NOT NULL REFERENCES owners(id),
  name        TEXT NOT NULL,
  token_hash  TEXT NOT NULL UNIQUE,
  created_at  INTEGER NOT NULL,
  revoked_at  INTEGER
);
CREATE INDEX devices_by_owner ON devices(owner_id);

-- One-time pairing codes. A code is "<id>-<secret>": the id finds the row (and counts
-- the tries against it), the secret is stored only as its SHA-256.
CREATE TABLE pairings (
  id           TEXT PRIMARY KEY,
  owner_id     TEXT NOT NULL,
  secret_hash  TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  tries        INTEGER NOT NULL DEFAULT 0,
  used_at      INTEGER,
  used_by      TEXT
);
