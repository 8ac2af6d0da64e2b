//! The owner's content key on this machine (`content-key.json`, 0600,
//! beside the login), every version of it, and this device's seal key
//! (`seal-key.json`), which the content key reaches it wrapped to
//! (`needs_you_trust::sealing`). Neither is ever sent.
//!
//! * On the owner's machine `setup` makes version 1 (`pair` makes it for an
//!   owner set up before there was one), `pair` wraps every version to each
//!   device it vouches for, and `devices revoke` makes the next version and
//!   wraps them all to the devices that remain ([`rotate`]).
//! * On a machine logged in with the owner's pairing link, `login` makes
//!   the seal key; the wrapped versions the pairer left are opened and kept
//!   the next time they are needed ([`on_this_device`]).

use std::path::PathBuf;

use needs_you_core::api::Devices;
use needs_you_core::signed::Certificate;
use needs_you_reporter::client::Client;
use needs_you_reporter::state::write_private;
use needs_you_trust::sealing::{unwrap, ContentKeys, SealKey, StoredSealKey};
use needs_you_trust::verify::owner_signed;

use crate::commands::path_part;
use crate::commands::trusting::{own_certificate, Vouched};
use crate::fail::{exit, Fail, Result};
use crate::keys::{Key, Whose};
use crate::login::{self, Login};

pub fn path() -> PathBuf {
    login::dir().join("content-key.json")
}

fn seal_key_path() -> PathBuf {
    login::dir().join("seal-key.json")
}

fn failed(e: impl std::fmt::Display) -> Fail {
    Fail::new(exit::REFUSED, e.to_string())
}

/// The versions of the content key kept here: `Ok(None)` when none are.
pub fn load() -> Result<Option<ContentKeys>> {
    let path = path();
    let Some(text) = login::read_private(
        &path,
        "whoever read it reads what your agents and you wrote",
    )?
    else {
        return Ok(None);
    };
    serde_json::from_str(&text).map(Some).map_err(|_| {
        Fail::new(
            exit::LOGIN,
            format!("{} is not a needs-you content key", path.display()),
        )
    })
}

fn save(keys: &ContentKeys) -> Result<()> {
    login::make_dir()?;
    let text = serde_json::to_string_pretty(keys).unwrap_or_default();
    write_private(&path(), text)
        .map_err(|e| failed(format!("cannot write {}: {e}", path().display())))
}

/// The owner's content key: the one kept here, else version 1, new, saved.
pub fn owners() -> Result<ContentKeys> {
    if let Some(keys) = load()? {
        return Ok(keys);
    }
    let keys = ContentKeys::first().map_err(failed)?;
    save(&keys)?;
    Ok(keys)
}

/// Forgets this device's seal key and the content key it opened: at
/// logout, and before a new login (they were another device's). Never the
/// content key of a machine that keeps the owner's key: it is the owner's,
/// and opens everything sealed so far.
pub fn forget_devices() {
    let _ = std::fs::remove_file(seal_key_path());
    if !crate::keys::path(Whose::Owner).exists() {
        let _ = std::fs::remove_file(path());
    }
}

/// Where a revoke says that it owes a turn of the content key: it strikes
/// the revoked device's key first (and the record forgets it), so a server
/// that then fails the turn would otherwise leave it forgotten, and the
/// revoked device opening what is sealed after. Kept until a turn is done.
fn owed_path() -> PathBuf {
    crate::login::dir().join("content-key-owed")
}

/// Says that a turn of the content key is owed, before the strike that owes it.
pub fn owe() -> Result<()> {
    write_private(&owed_path(), b"").map_err(|e| {
        Fail::new(
            exit::REFUSED,
            format!("cannot note the content key's turn: {e}"),
        )
    })
}

/// Whether a turn of the content key is owed, by this revoke or one before
/// that could not finish it.
pub fn owed() -> bool {
    owed_path().exists()
}

/// After a device was revoked: a new version of the owner's content key
/// for what is sealed from now on, kept, and wrapped, with every version
/// before it, to each device the owner key still vouches for (`vouched`),
/// never to one the server names. The revoked device keeps only the
/// versions it had. The new version, and how many devices got it.
pub fn rotate(client: &Client, owner_key: &Key, vouched: &[Vouched]) -> Result<(u32, usize)> {
    let owner = owner_key.fingerprint();
    let mut keys = owners()?;
    let version = keys.rotate().map_err(failed)?;
    save(&keys)?;
    for device in vouched {
        let (content_keys, wrapped) = keys
            .for_device(&owner, &device.device_id, &device.seal_key)
            .map_err(failed)?;
        // Its certificate signed anew, vouching for every version now.
        let certificate = Certificate {
            content_keys,
            ..device.certificate.clone()
        };
        let _: serde_json::Value = client.put(
            &format!("/v1/devices/{}/certificate", path_part(&device.device_id)?),
            &serde_json::json!({ "certificate": owner_key.sign_json(&certificate), "content_keys": wrapped }),
        )?;
    }
    // Turned, and given to every device that counts: nothing is owed.
    let _ = std::fs::remove_file(owed_path());
    Ok((version, vouched.len()))
}

/// A new seal key for this device, having forgotten an earlier login's.
pub fn new_seal_key() -> Result<SealKey> {
    forget_devices();
    SealKey::generate().map_err(failed)
}

pub fn save_seal_key(key: &SealKey) -> Result<()> {
    login::make_dir()?;
    let text = serde_json::to_string_pretty(&key.stored()).unwrap_or_default();
    write_private(&seal_key_path(), text)
        .map_err(|e| failed(format!("cannot write {}: {e}", seal_key_path().display())))
}

fn seal_key() -> Result<Option<SealKey>> {
    let path = seal_key_path();
    let Some(text) = login::read_private(&path, "whoever read it could open the content key")?
    else {
        return Ok(None);
    };
    serde_json::from_str::<StoredSealKey>(&text)
        .ok()
        .and_then(|s| SealKey::from_stored(&s).ok())
        .map(Some)
        .ok_or_else(|| {
            Fail::new(
                exit::LOGIN,
                format!("{} is not a needs-you seal key", path.display()),
            )
        })
}

/// Whether this machine's agents must seal what they report: it logged in
/// with the owner's pairing link, which pinned the owner and made the seal
/// key the content key is wrapped to. Judged by what this machine kept at
/// login, never by whether the server handed the key over: a server that
/// withheld it would otherwise read every question this machine asks.
pub fn must_seal(login: &Login) -> bool {
    login.owner.is_some() && seal_key_path().exists()
}

/// The content key as this login holds it: the owner's own, or, on a
/// device, every version kept here and, with a seal key, those its pairer
/// wrapped to it since (opened, then kept). `Ok(None)` when this login holds
/// none: a login without the owner's pairing link, or one whose pairer has
/// not vouched for it yet. A wrapped key that does not open (the server
/// changed it, or gave another device's) is left, never kept.
pub fn on_this_device(login: &Login, client: &Client) -> Result<Option<ContentKeys>> {
    // A machine that keeps the owner key keeps the owner's content key: a
    // device login there takes nothing into it.
    if login.is_owner() || Key::load(Whose::Owner).is_ok_and(|k| k.is_some()) {
        return load();
    }
    let mut keys = load()?.unwrap_or_default();
    let (Some(seal), Some(owner), Some(device_id)) = (seal_key()?, &login.owner, &login.device_id)
    else {
        return Ok((!keys.keys.is_empty()).then_some(keys));
    };
    let me: Devices = client.get("/v1/devices")?;
    let Some(me) = me.devices.into_iter().find(|d| &d.device_id == device_id) else {
        return Ok((!keys.keys.is_empty()).then_some(keys));
    };
    // Only versions the owner key vouched for in this device's certificate,
    // for this device's own key.
    let vouched = match Key::load(Whose::Device).ok().flatten() {
        Some(device_key) => own_certificate(&me, owner, &device_key)
            .and_then(|e| owner_signed::<Certificate>(owner, &e).ok())
            .map(|c| c.content_keys)
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let held = keys.keys.len();
    for wrapped in &me.content_keys {
        if let Ok(key) = unwrap(&seal, owner, device_id, wrapped, &vouched) {
            keys.add(key);
        }
    }
    if keys.keys.len() > held {
        save(&keys)?;
    }
    Ok((!keys.keys.is_empty()).then_some(keys))
}
