-- A device's Web Push subscription: the browser's PushSubscription as the Worker
-- keeps it ({"endpoint", "p256dh", "auth"}, JSON), or NULL when it has none.
-- Revoking the device clears it in the same statement.
ALTER TABLE devices ADD COLUMN push TEXT;
ALTER TABLE devices ADD COLUMN push_updated_at INTEGER;

-- A counter that every change to an owner's list raises (a question opened or
-- closed, a report, a task made or revoked): the list's ETag, so that a page
-- polling an unchanged list is answered 304 after one read by primary key.
ALTER TABLE owners ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
