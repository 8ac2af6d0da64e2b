-- Which device made a pairing code (null: the owner's token). A code made by a device
-- works only while that device does: revoking a stolen device also stops the codes it
-- made, which would otherwise pair a new device for the thief.
ALTER TABLE pairings ADD COLUMN made_by TEXT;
