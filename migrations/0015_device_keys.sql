-- A device's own signing key (`needs_you_core::signed`): its public half and the proof of it made
-- with the pairing link's secret, as the device sent them at pairing; the certificate the owner's
-- key signed for it, which the pairer sends after checking that proof. The owner's newest device
-- list, signed by the owner's key, handed to every relay with the answers. The Worker checks none
-- of these signatures: only the agent's machine can.
ALTER TABLE devices ADD COLUMN public_key TEXT;
ALTER TABLE devices ADD COLUMN key_proof TEXT;
ALTER TABLE devices ADD COLUMN certificate TEXT;
ALTER TABLE owners ADD COLUMN device_list TEXT;
-- The pairing whose code made the device: its pairer finds the device's key there.
ALTER TABLE devices ADD COLUMN pairing_id TEXT;
