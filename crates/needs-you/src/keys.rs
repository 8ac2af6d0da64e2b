//! This machine's signing keys, ECDSA P-256, kept beside the login (the
//! files 0600, refused if others can read them), never sent: the server sees
//! only their public halves.
//!
//! * The owner's (`owner-key.json`), made by `setup` on the owner's machine:
//!   it signs the owner's answers, the certificates of the devices `pair`
//!   pairs, and the owner's device list. An agent's machine pins its
//!   fingerprint at `login --owner` and takes only answers that chain up to
//!   it (`needs_you_trust::verify`).
//! * A device's (`device-key.json`), made by `login` from a pairing link of
//!   the owner's `pair`, which vouches for it: it signs that command line's
//!   answers, with the certificate beside.

use std::ops::Deref;
use std::path::PathBuf;

use needs_you_reporter::state::write_private;
use needs_you_trust::signing::{self, SignKey};
use serde::{Deserialize, Serialize};

use crate::fail::{exit, Fail, Result};
use crate::login;

/// The key as its file keeps it.
#[derive(Serialize, Deserialize)]
struct Stored {
    /// The private scalar, 32 bytes, base64url ([`SignKey::secret`]).
    secret: String,
}

/// A signing key of this machine: what it signs and how is
/// [`SignKey`]'s, where it is kept this module's.
pub struct Key {
    key: SignKey,
}

impl Deref for Key {
    type Target = SignKey;

    fn deref(&self) -> &SignKey {
        &self.key
    }
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
    pub fn generate() -> Result<Key> {
        SignKey::generate()
            .map(|key| Key { key })
            .map_err(|e| Fail::new(exit::REFUSED, e.to_string()))
    }

    /// Written to [`path`], which must not exist: a second owner key would
    /// leave every machine pinned to the first unable to take an answer, and
    /// a second device key would not be the one its certificate names.
    pub fn save_new(&self, whose: Whose) -> Result<PathBuf> {
        let path = path(whose);
        if path.exists() {
            return Err(Fail::new(
                exit::REFUSED,
                format!(
                    "{} exists already: its key is the one that was vouched for",
                    path.display()
                ),
            ));
        }
        login::make_dir()?;
        let stored = Stored {
            secret: self.key.secret(),
        };
        let text = serde_json::to_string_pretty(&stored).unwrap_or_default();
        write_private(&path, text).map_err(|e| {
            Fail::new(
                exit::REFUSED,
                format!("cannot write {}: {e}", path.display()),
            )
        })?;
        Ok(path)
    }

    /// The stored key: `Ok(None)` when there is none.
    pub fn load(whose: Whose) -> Result<Option<Key>> {
        let path = path(whose);
        let Some(text) = login::read_private(&path, "whoever read it can answer for you")? else {
            return Ok(None);
        };
        let unreadable = || {
            Fail::new(
                exit::LOGIN,
                format!("{} is not a needs-you key", path.display()),
            )
        };
        let stored: Stored = serde_json::from_str(&text).map_err(|_| unreadable())?;
        let key = SignKey::from_secret(&stored.secret).ok_or_else(unreadable)?;
        Ok(Some(Key { key }))
    }
}

/// 16 random bytes, base64url: a statement's id, a pairing link's secret.
pub fn random_id() -> Result<String> {
    signing::random_id().map_err(|e| Fail::new(exit::REFUSED, e.to_string()))
}
