-- Sealed content (needs_you_core::sealed): a device's seal key, the ECDH P-256 key it proved with the
-- pairing link's secret beside its signing key, and the owner's content key wrapped to it by its
-- pairer, as a JSON array of `w1.…` texts, one per version. The Worker can open none of them.
ALTER TABLE devices ADD COLUMN seal_key TEXT;
ALTER TABLE devices ADD COLUMN content_keys TEXT;
