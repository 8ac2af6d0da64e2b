//! This machine's signing keys, ECDSA P-256, kept beside the login (the
//! files 0600, refused if others can read them), never sent: the server sees
//! only their public halves.
//!
//! * The owner's (`owner-key.json`), made by `setup` on the owner's machine:
//!   it signs the owner's answers, the certificates of the devices `pair`
//!   pairs, and the owner's device list. An agent's machine pins its
//!   fingerprint at `login --owner` and takes only answers that chain up to
//!   it (`needs_you_reporter::trust`).
//! * A device's (`device-key.json`), made by `login` from a pairing link of
//!   the owner's `pair`, which vouches for it: it signs that command line's
//!   answers, with the certificate beside.

use std::path::PathBuf;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use needs_you_core::signed::Envelope;
use needs_you_reporter::state::write_private;
use needs_you_reporter::trust::fingerprint;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde::{Deserialize, Serialize};

use crate::login;

/// The key as its file keeps it.
#[derive(Serialize, Deserialize)]
struct Stored {
    /// The private scalar, 32 bytes, base64url.
    secret: String,
}

pub struct Key {
    key: SigningKey,
}

/// Whose key a file keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    Owner,
    Device,
}

pub fn path(whose: Whose) -> PathBuf {
    login::dir().join(match whose {
        Whose::Owner => "owner-key.json",
        Whose::Device => "device-key.json",
    })
}

impl Key {
    /// A new key, from the system's random source.
    pub fn generate() -> Result<Key, String> {
        loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| format!("no random bytes: {e}"))?;
            // A scalar of zero or past the curve's order is refused: draw again.
            if let Ok(key) = SigningKey::from_slice(&bytes) {
                return Ok(Key { key });
            }
        }
    }

    /// The public half, SEC1 uncompressed.
    pub fn public(&self) -> Vec<u8> {
        self.key
            .verifying_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    }

    /// What a machine pins: [`fingerprint`] of the public half.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.public())
    }

    /// `what`, as JSON, signed: an answer's statement, a device's
    /// certificate, the owner's device list.
    pub fn sign_json(&self, what: &impl Serialize) -> Envelope {
        let bytes = serde_json::to_vec(what).unwrap_or_default();
        let signature: Signature = self.key.sign(&bytes);
        Envelope {
            statement: B64.encode(&bytes),
            signature: B64.encode(signature.to_bytes()),
            key: B64.encode(self.public()),
            certificate: None,
        }
    }

    /// Written to [`path`], which must not exist: a second owner key would
    /// leave every machine pinned to the first unable to take an answer, and
    /// a second device key would not be the one its certificate names.
    pub fn save_new(&self, whose: Whose) -> Result<PathBuf, String> {
        let path = path(whose);
        if path.exists() {
            return Err(format!(
                "{} exists already: its key is the one that was vouched for",
                path.display()
            ));
        }
        login::make_dir()?;
        let stored = Stored {
            secret: B64.encode(self.key.to_bytes()),
        };
        let text = serde_json::to_string_pretty(&stored).unwrap_or_default();
        write_private(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path)
    }

    /// The stored key: `Ok(None)` when there is none.
    pub fn load(whose: Whose) -> Result<Option<Key>, String> {
        let path = path(whose);
        let Some(text) = login::read_private(&path, "whoever read it can answer for you")? else {
            return Ok(None);
        };
        let unreadable = || format!("{} is not a needs-you key", path.display());
        let stored: Stored = serde_json::from_str(&text).map_err(|_| unreadable())?;
        let bytes = B64.decode(stored.secret).map_err(|_| unreadable())?;
        let key = SigningKey::from_slice(&bytes).map_err(|_| unreadable())?;
        Ok(Some(Key { key }))
    }
}

/// 16 random bytes, base64url: a statement's id, a pairing link's secret.
pub fn random_id() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random bytes: {e}"))?;
    Ok(B64.encode(bytes))
}

#[cfg(test)]
mod tests {
    use needs_you_core::afar::{AnswerBody, Verdict};
    use needs_you_core::signed::{Statement, VERSION};

    use super::*;

    #[test]
    fn what_the_owner_key_signs_the_agents_machine_takes_under_its_fingerprint() {
        let key = Key::generate().unwrap();
        let fp = key.fingerprint();
        let statement = Statement {
            v: VERSION,
            owner: fp.clone(),
            id: random_id().unwrap(),
            question_id: "q_1".into(),
            session: "s".into(),
            open_seq: 1,
            digest: Some("d".into()),
            answer: AnswerBody::Decision {
                decision: Verdict::Allow,
                message: None,
            },
            sealed_hash: None,
            expires_at: 2_000,
        };
        let envelope = key.sign_json(&statement);
        assert!(envelope.well_formed());
        assert_eq!(
            needs_you_reporter::trust::verify(&fp, Some(&envelope), None, 1_000),
            Ok(statement)
        );
        let other = Key::generate().unwrap();
        assert_ne!(other.fingerprint(), fp);
    }
}
