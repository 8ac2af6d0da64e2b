//! Where `needs-you` keeps its login: `$XDG_CONFIG_HOME/needs-you/login.json`
//! (else `~/.config/needs-you/`), the folder 0700 and the file 0600, written
//! atomically. A file that others can read is refused, not used: the
//! credential in it acts for its owner.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use needs_you_reporter::state::write_private;

use crate::fail::{exit, Fail, Result};

/// Who this machine is logged in as.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Login {
    pub url: String,
    /// `nyo_…` (after `setup`) or `nyd_…` (after `login`).
    pub token: String,
    /// The device id, for a device credential (so `logout` can revoke it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    /// The fingerprint of the owner's key, pinned here: the agents this
    /// machine runs take only answers that key signed. `setup` pins its own
    /// key, `login --owner` the one `pair` printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

impl Login {
    pub fn is_owner(&self) -> bool {
        self.token.starts_with("nyo_")
    }
}

pub fn dir() -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d).join("needs-you"),
        None => needs_you_reporter::install::home()
            .join(".config")
            .join("needs-you"),
    }
}

pub fn path() -> PathBuf {
    dir().join("login.json")
}

/// A private file's text: `Ok(None)` when there is none; refused, saying
/// `why` it matters, when others can read it.
pub fn read_private(path: &Path, why: &str) -> Result<Option<String>> {
    let unreadable = |why: String| Fail::new(exit::LOGIN, why);
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(unreadable(format!("cannot read {}: {e}", path.display()))),
    };
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(unreadable(format!(
            "{} can be read by others; run `chmod 600 {}` ({why})",
            path.display(),
            path.display()
        )));
    }
    fs::read_to_string(path)
        .map(Some)
        .map_err(|e| unreadable(format!("cannot read {}: {e}", path.display())))
}

/// The stored login: `Ok(None)` when there is none.
pub fn load() -> Result<Option<Login>> {
    let path = path();
    let Some(text) = read_private(&path, "and consider `needs-you logout`")? else {
        return Ok(None);
    };
    serde_json::from_str(&text).map(Some).map_err(|e| {
        Fail::new(
            exit::LOGIN,
            format!(
                "{} is not a needs-you login ({e}); log in again",
                path.display()
            ),
        )
    })
}

/// The config folder, made (0700) if it is not there.
pub fn make_dir() -> Result<PathBuf> {
    let dir = dir();
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| {
            Fail::new(
                exit::REFUSED,
                format!("cannot create {}: {e}", dir.display()),
            )
        })?;
    Ok(dir)
}

pub fn save(login: &Login) -> Result<PathBuf> {
    make_dir()?;
    let path = path();
    let text = serde_json::to_string_pretty(login).unwrap_or_default();
    write_private(&path, text).map_err(|e| {
        Fail::new(
            exit::REFUSED,
            format!("cannot write {}: {e}", path.display()),
        )
    })?;
    Ok(path)
}

pub fn forget() -> Result<()> {
    match fs::remove_file(path()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Fail::new(
            exit::REFUSED,
            format!("cannot remove {}: {e}", path().display()),
        )),
    }
}
