-- What each device may do beyond reading its owner's list and tasks: one bit per right
-- (1 tasks, 2 answer, 4 pair; needs_you_core::api::Rights). Devices paired before rights
-- existed keep what they could do then.
ALTER TABLE devices ADD COLUMN rights INTEGER NOT NULL DEFAULT 7;
-- The device whose pairing code paired this one (null: the owner's token), so that
-- revoking a device takes the devices it paired with it.
ALTER TABLE devices ADD COLUMN paired_by TEXT;
CREATE INDEX devices_by_pairer ON devices(paired_by) WHERE paired_by IS NOT NULL;
-- The most a device paired with this code may do.
ALTER TABLE pairings ADD COLUMN rights INTEGER NOT NULL DEFAULT 7;
-- The device that created a task (null: the owner's token): revoked with that device.
ALTER TABLE tasks ADD COLUMN created_by TEXT;
CREATE INDEX tasks_by_creator ON tasks(created_by) WHERE created_by IS NOT NULL;
