-- Presence: until when a device's page is open, visible and focused (its page says
-- so every 20 s while it is; null once it says it is not). A notification that
-- fires meanwhile makes no sound (src/delivery.rs, `quiet`).
ALTER TABLE devices ADD COLUMN looking_until INTEGER;
-- Mute: until when a task's questions ring nobody (they are listed as ever).
ALTER TABLE tasks ADD COLUMN muted_until INTEGER;
