-- Each channel's last delivery outcome, kept on its row so that GET /v1/channels can say
-- why a phone stopped ringing without scanning the delivery log.
ALTER TABLE channels ADD COLUMN last_success_at INTEGER;
ALTER TABLE channels ADD COLUMN last_failure_at INTEGER;
ALTER TABLE channels ADD COLUMN last_error TEXT;
