-- The statement an owner's device signed to take back a lasting rule
-- (`needs_you_core::signed::Revoking`, an envelope as JSON), kept with the asking and handed
-- to the task's relay, which takes back only the rule it names.
ALTER TABLE rules ADD COLUMN revoke_signed TEXT;
