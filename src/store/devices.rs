//! Devices and their pairing codes.

use serde::Deserialize;
use serde_json::Value;
use worker::{Env, Result};

use needs_you_core::api::{self, Rights};
use needs_you_core::CloseReason;

use super::sql::{changes, db, n, s, stmt};
use crate::limits;

/// A pairing code is tried this many times at most, then it is dead.
pub const MAX_PAIRING_TRIES: u32 = 5;

/// A new pairing, unless a live one has the same id (then nothing: the caller
/// draws again) or the owner has [`limits::PAIRING_CODES_PER_OWNER`] live
/// ones; an expired or used row with that id is reused. Binds ?1 id, ?2
/// owner id, ?3 the secret's hash, ?4 now, ?5 when it expires, ?6 the device
/// that made it (null: the owner's token), ?7 its rights (bits), ?8 the limit.
const CREATE_PAIRING: &str = "
INSERT INTO pairings (id, owner_id, secret_hash, created_at, expires_at, made_by, rights)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7
WHERE (SELECT COUNT(*) FROM pairings WHERE owner_id = ?2 AND used_at IS NULL AND expires_at > ?4) < ?8
ON CONFLICT (id) DO UPDATE SET owner_id = excluded.owner_id, secret_hash = excluded.secret_hash,
  created_at = excluded.created_at, expires_at = excluded.expires_at, tries = 0, used_at = NULL, used_by = NULL,
  made_by = excluded.made_by, rights = excluded.rights
WHERE pairings.expires_at <= ?4 OR pairings.used_at IS NOT NULL
RETURNING id";

/// The owner's live, unused pairing codes. Binds ?1 the owner id, ?2 now.
const LIVE_PAIRINGS: &str = "
SELECT COUNT(*) AS n FROM pairings WHERE owner_id = ?1 AND used_at IS NULL AND expires_at > ?2";

pub struct NewPairing<'a> {
    pub id: &'a str,
    pub owner_id: &'a str,
    pub secret_hash: &'a str,
    pub expires_at: f64,
    /// The device asking, when a device asks.
    pub made_by: Option<&'a str>,
    pub rights: &'a Rights,
}

/// What asking for a pairing did.
pub enum Paired {
    Made,
    /// Its id is a live code's: draw again.
    IdTaken,
    /// The owner has as many live codes as they may.
    TooMany,
}

#[derive(Deserialize)]
struct Count {
    n: u32,
}

pub async fn create_pairing(env: &Env, p: &NewPairing<'_>, now: f64) -> Result<Paired> {
    let db = db(env)?;
    let args = [
        s(p.id),
        s(p.owner_id),
        s(p.secret_hash),
        n(now),
        n(p.expires_at),
        p.made_by.map_or(wasm_bindgen::JsValue::NULL, s),
        n(f64::from(p.rights.bits())),
        n(f64::from(limits::PAIRING_CODES_PER_OWNER)),
    ];
    let results = db
        .batch(vec![
            stmt(&db, CREATE_PAIRING, &args)?,
            stmt(&db, LIVE_PAIRINGS, &[s(p.owner_id), n(now)])?,
        ])
        .await?;
    if !results[0].results::<Value>()?.is_empty() {
        return Ok(Paired::Made);
    }
    let live = results[1].results::<Count>()?.first().map_or(0, |c| c.n);
    Ok(if live >= limits::PAIRING_CODES_PER_OWNER {
        Paired::TooMany
    } else {
        Paired::IdTaken
    })
}

/// Counts a try of a live code. Binds ?1 the id, ?2 now.
const COUNT_TRY: &str = "
UPDATE pairings SET tries = tries + 1 WHERE id = ?1 AND used_at IS NULL AND expires_at > ?2";

/// A code that works now, as a row: its secret right, live, within its
/// tries, and its maker (if a device made it) not revoked. Every statement
/// that reads or uses a code says it with this condition. Binds ?1 the id,
/// ?2 the secret's hash, ?3 now, ?5 the most tries.
macro_rules! code_works {
    () => {
        "id = ?1 AND secret_hash = ?2 AND used_at IS NULL AND expires_at > ?3 AND tries <= ?5
  AND (made_by IS NULL
       OR EXISTS (SELECT 1 FROM devices d WHERE d.id = pairings.made_by AND d.revoked_at IS NULL))"
    };
}

/// Whose the code is and what it grants, if it works. Binds as [`code_works!`].
const CHECK_CODE: &str = concat!(
    "SELECT o.name AS owner_name, p.expires_at, p.rights FROM pairings p JOIN owners o ON o.id = p.owner_id
WHERE p.rowid IN (SELECT rowid FROM pairings WHERE ",
    code_works!(),
    ")"
);

/// Uses the code if it works and its owner has room for one more device.
/// Binds as [`code_works!`], and ?4 this request's id, ?6 the device limit.
const USE_CODE: &str = concat!(
    "UPDATE pairings SET used_at = ?3, used_by = ?4 WHERE ",
    code_works!(),
    "
  AND (SELECT COUNT(*) FROM devices d WHERE d.owner_id = pairings.owner_id AND d.revoked_at IS NULL) < ?6"
);

/// The device, for the code this request used, with the code's rights
/// narrowed to those asked for, and its maker. Binds ?1 the pairing id, ?4
/// this request's id, ?7 the device id, ?8 its name, ?9 its token's hash,
/// ?3 now, ?10 the rights asked for (bits), ?11 its signing key, ?12 the
/// proof of its keys and ?13 its seal key (or nulls).
const CREATE_DEVICE: &str = "
INSERT INTO devices (id, owner_id, name, token_hash, created_at, rights, paired_by, pairing_id, public_key, key_proof, seal_key, asked_rights)
SELECT ?7, owner_id, ?8, ?9, ?3, rights & ?10, made_by, id, ?11, ?12, ?13, ?10 FROM pairings WHERE id = ?1 AND used_by = ?4
RETURNING id, rights";

pub struct Redeem<'a> {
    pub pairing_id: &'a str,
    pub secret_hash: &'a str,
    pub request_id: &'a str,
    pub device_id: &'a str,
    pub name: &'a str,
    pub token_hash: &'a str,
    /// What the new device asks to be able to do; it gets what the code grants of it.
    pub asked: &'a Rights,
    /// Its signing key, its seal key, and the proof of both made with the
    /// link's secret.
    pub key: Option<&'a str>,
    pub seal_key: Option<&'a str>,
    pub proof: Option<&'a str>,
}

/// What redeeming a code did.
pub enum Redeemed {
    /// The device, with the rights it got.
    Device(Rights),
    /// The code is right, but its owner has as many devices as they may.
    TooManyDevices,
    /// Wrong, used, expired, tried too often, or its maker revoked.
    Refused,
}

/// Whose a code is, if it works now, without using it. Every look counts
/// as one of the code's tries, like a redemption: a check cannot be used to
/// guess codes where a redemption could not.
pub async fn check_pairing(
    env: &Env,
    pairing_id: &str,
    secret_hash: &str,
    now: f64,
) -> Result<Option<api::PairingCheck>> {
    let db = db(env)?;
    let args = [
        s(pairing_id),
        s(secret_hash),
        n(now),
        wasm_bindgen::JsValue::NULL,
        n(f64::from(MAX_PAIRING_TRIES)),
    ];
    let results = db
        .batch(vec![
            stmt(&db, COUNT_TRY, &[s(pairing_id), n(now)])?,
            stmt(&db, CHECK_CODE, &args)?,
        ])
        .await?;
    #[derive(Deserialize)]
    struct Row {
        owner_name: String,
        expires_at: i64,
        rights: u32,
    }
    Ok(results[1]
        .results::<Row>()?
        .into_iter()
        .next()
        .map(|r| api::PairingCheck {
            owner_name: r.owner_name,
            expires_at: r.expires_at,
            rights: Rights::from_bits(r.rights),
        }))
}

/// Turns a code into a device, in one transaction: every try counts, and a
/// code works once, while live and within its tries.
pub async fn redeem_pairing(env: &Env, r: &Redeem<'_>, now: f64) -> Result<Redeemed> {
    let db = db(env)?;
    let args = [
        s(r.pairing_id),
        s(r.secret_hash),
        n(now),
        s(r.request_id),
        n(f64::from(MAX_PAIRING_TRIES)),
        n(f64::from(limits::DEVICES_PER_OWNER)),
        s(r.device_id),
        s(r.name),
        s(r.token_hash),
        n(f64::from(r.asked.bits())),
        r.key.map_or(wasm_bindgen::JsValue::NULL, s),
        r.proof.map_or(wasm_bindgen::JsValue::NULL, s),
        r.seal_key.map_or(wasm_bindgen::JsValue::NULL, s),
    ];
    let results = db
        .batch(vec![
            stmt(&db, COUNT_TRY, &[s(r.pairing_id), n(now)])?,
            stmt(&db, CHECK_CODE, &args[..5])?,
            stmt(&db, USE_CODE, &args[..6])?,
            stmt(&db, CREATE_DEVICE, &args)?,
        ])
        .await?;
    #[derive(Deserialize)]
    struct Made {
        rights: u32,
    }
    if let Some(made) = results[3].results::<Made>()?.into_iter().next() {
        return Ok(Redeemed::Device(Rights::from_bits(made.rights)));
    }
    Ok(if results[1].results::<Value>()?.is_empty() {
        Redeemed::Refused
    } else {
        Redeemed::TooManyDevices
    })
}

/// A live device by its credential's hash. Binds ?1 the hash.
const DEVICE_BY_TOKEN_HASH: &str =
    "SELECT id, owner_id, rights FROM devices WHERE token_hash = ?1 AND revoked_at IS NULL";

#[derive(Deserialize)]
pub struct DeviceAuthRow {
    pub id: String,
    pub owner_id: String,
    /// [`needs_you_core::api::Rights::bits`].
    pub rights: u32,
}

pub async fn device_by_token_hash(env: &Env, hash: &str) -> Result<Option<DeviceAuthRow>> {
    let db = db(env)?;
    stmt(&db, DEVICE_BY_TOKEN_HASH, &[s(hash)])?
        .first(None)
        .await
}

/// The owner's live devices, newest first; with ?2, only that one, with the
/// content key wrapped to it, which no one else could open and so is not
/// listed to the owner. Binds ?1 the owner id, ?2 a device id or null.
const LIST_DEVICES: &str = "
SELECT id AS device_id, name, created_at, push IS NOT NULL AS push, rights, paired_by,
       public_key, seal_key, certificate, CASE WHEN ?2 IS NULL THEN NULL ELSE content_keys END AS content_keys
FROM devices
WHERE owner_id = ?1 AND revoked_at IS NULL AND (?2 IS NULL OR id = ?2)
ORDER BY created_at DESC";

pub async fn list_devices(
    env: &Env,
    owner_id: &str,
    only: Option<&str>,
) -> Result<Vec<api::Device>> {
    #[derive(Deserialize)]
    struct Row {
        device_id: String,
        name: String,
        created_at: i64,
        #[serde(deserialize_with = "super::sql::flag")]
        push: bool,
        rights: u32,
        paired_by: Option<String>,
        public_key: Option<String>,
        seal_key: Option<String>,
        certificate: Option<String>,
        content_keys: Option<String>,
    }
    let db = db(env)?;
    let only = only.map_or(wasm_bindgen::JsValue::NULL, s);
    let rows: Vec<Row> = stmt(&db, LIST_DEVICES, &[s(owner_id), only])?
        .all()
        .await?
        .results()?;
    Ok(rows
        .into_iter()
        .map(|r| api::Device {
            device_id: r.device_id,
            name: r.name,
            created_at: r.created_at,
            push: r.push,
            rights: Rights::from_bits(r.rights),
            paired_by: r.paired_by,
            key: r.public_key,
            seal_key: r.seal_key,
            certificate: r.certificate.and_then(|c| serde_json::from_str(&c).ok()),
            content_keys: r
                .content_keys
                .and_then(|c| serde_json::from_str(&c).ok())
                .unwrap_or_default(),
        })
        .collect())
}

/// The owner's pairing ?2 and the live device its code made since it was
/// made (an id is drawn again once its code is spent). Binds ?1 the owner id.
const PAIRING_STATE: &str = "
SELECT p.id AS pairing_id, p.expires_at, d.id AS device_id, d.name, d.rights, d.public_key, d.seal_key, d.asked_rights, d.key_proof
FROM pairings p LEFT JOIN devices d
  ON d.pairing_id = p.id AND d.owner_id = p.owner_id AND d.created_at >= p.created_at AND d.revoked_at IS NULL
WHERE p.id = ?2 AND p.owner_id = ?1";

/// Whether the owner's pairing was used, and by which device.
pub async fn pairing_state(
    env: &Env,
    owner_id: &str,
    pairing_id: &str,
) -> Result<Option<api::PairingState>> {
    #[derive(Deserialize)]
    struct Row {
        pairing_id: String,
        expires_at: i64,
        device_id: Option<String>,
        name: Option<String>,
        rights: Option<u32>,
        public_key: Option<String>,
        seal_key: Option<String>,
        asked_rights: Option<u32>,
        key_proof: Option<String>,
    }
    let db = db(env)?;
    let row: Option<Row> = stmt(&db, PAIRING_STATE, &[s(owner_id), s(pairing_id)])?
        .first(None)
        .await?;
    Ok(row.map(|r| api::PairingState {
        pairing_id: r.pairing_id,
        expires_at: r.expires_at,
        device: r.device_id.map(|device_id| api::PairedDevice {
            device_id,
            name: r.name.unwrap_or_default(),
            rights: Rights::from_bits(r.rights.unwrap_or(0)),
            key: r.public_key,
            seal_key: r.seal_key,
            asked: r.asked_rights.map(Rights::from_bits),
            proof: r.key_proof,
        }),
    }))
}

/// Keeps the certificate (JSON) of the owner's live device ?2, which must
/// have a key, and, unless ?4 is null, the content key wrapped to it (a
/// JSON array). Binds ?1 the owner id, ?3 the certificate.
const SET_CERTIFICATE: &str = "
UPDATE devices SET certificate = ?3, content_keys = COALESCE(?4, content_keys)
WHERE id = ?2 AND owner_id = ?1 AND revoked_at IS NULL AND public_key IS NOT NULL";

/// Whether the device was there to take it.
pub async fn set_certificate(
    env: &Env,
    owner_id: &str,
    device_id: &str,
    certificate: &str,
    content_keys: Option<&str>,
) -> Result<bool> {
    let db = db(env)?;
    let r = stmt(
        &db,
        SET_CERTIFICATE,
        &[
            s(owner_id),
            s(device_id),
            s(certificate),
            content_keys.map_or(wasm_bindgen::JsValue::NULL, s),
        ],
    )?
    .run()
    .await?;
    Ok(changes(&r)? > 0)
}

/// The owner's newest device list, as its envelope's JSON.
pub async fn device_list(env: &Env, owner_id: &str) -> Result<Option<String>> {
    #[derive(Deserialize)]
    struct Row {
        device_list: Option<String>,
    }
    let db = db(env)?;
    let row: Option<Row> = stmt(
        &db,
        "SELECT device_list FROM owners WHERE id = ?1",
        &[s(owner_id)],
    )?
    .first(None)
    .await?;
    Ok(row.and_then(|r| r.device_list))
}

pub async fn set_device_list(env: &Env, owner_id: &str, list: &str) -> Result<()> {
    let db = db(env)?;
    stmt(
        &db,
        "UPDATE owners SET device_list = ?2 WHERE id = ?1",
        &[s(owner_id), s(list)],
    )?
    .run()
    .await?;
    Ok(())
}

/// The device ?1 of owner ?2 and every device paired from it, at any depth:
/// what revoking it takes. Revoked ones are followed too, so that a device
/// paired by one revoked earlier still goes with its ancestor.
macro_rules! lineage {
    () => {
        "WITH RECURSIVE lineage(id) AS (
  SELECT id FROM devices WHERE id = ?1 AND owner_id = ?2
  UNION SELECT d.id FROM devices d JOIN lineage l ON d.paired_by = l.id WHERE d.owner_id = ?2)
"
    };
}

/// Closes the open questions of the tasks the lineage created. Binds ?1,
/// ?2 as [`lineage!`], ?3 now, ?4 the close reason.
const CLOSE_FOR_LINEAGE: &str = concat!(
    lineage!(),
    "UPDATE questions SET closed_at = ?3, close_reason = ?4
WHERE closed_at IS NULL AND task_id IN
  (SELECT id FROM tasks WHERE owner_id = ?2 AND revoked_at IS NULL AND created_by IN (SELECT id FROM lineage))
RETURNING id, kind, notified_at"
);

/// Revokes the tasks the lineage created. Binds as [`CLOSE_FOR_LINEAGE`].
const REVOKE_TASKS_OF_LINEAGE: &str = concat!(
    lineage!(),
    "UPDATE tasks SET revoked_at = ?3
WHERE owner_id = ?2 AND revoked_at IS NULL AND created_by IN (SELECT id FROM lineage)
RETURNING id"
);

/// Revokes the lineage's live devices, and drops their push subscriptions,
/// only while the first of them is live. Binds as [`CLOSE_FOR_LINEAGE`].
const REVOKE_LINEAGE: &str = concat!(
    lineage!(),
    "UPDATE devices SET revoked_at = ?3, push = NULL, push_updated_at = ?3
WHERE owner_id = ?2 AND revoked_at IS NULL AND id IN (SELECT id FROM lineage)
RETURNING id"
);

/// Fails the answers that the lineage sent and the agent's machine has not
/// taken yet: a stolen phone's queued allow goes with the phone. Binds as
/// [`CLOSE_FOR_LINEAGE`].
const FAIL_ANSWERS_OF_LINEAGE: &str = concat!(
    lineage!(),
    "UPDATE answers SET state = 'failed', reason = 'the device that sent it was revoked',
       reason_code = 'revoked', updated_at = ?3
WHERE owner_id = ?2 AND state IN ('queued', 'delivered') AND device_id IN (SELECT id FROM lineage)"
);

/// Whether ?1 is a live device of owner ?2 (before the batch revokes it).
const LIVE_DEVICE: &str =
    "SELECT id FROM devices WHERE id = ?1 AND owner_id = ?2 AND revoked_at IS NULL";

/// What revoking a device took with it.
pub struct RevokedDevice {
    /// The devices revoked, the one asked for first.
    pub devices: Vec<String>,
    pub tasks: Vec<String>,
    pub closed: Vec<crate::question::ClosedQuestion>,
}

/// Revokes the owner's live device at once, every device paired from it and
/// every task any of them created (their questions close); `None` when it
/// is not the owner's live device, and then nothing changes.
pub async fn revoke_device(
    env: &Env,
    owner_id: &str,
    device_id: &str,
    now: f64,
) -> Result<Option<RevokedDevice>> {
    let db = db(env)?;
    let live = stmt(&db, LIVE_DEVICE, &[s(device_id), s(owner_id)])?
        .all()
        .await?;
    if live.results::<Value>()?.is_empty() {
        return Ok(None);
    }
    let args = [
        s(device_id),
        s(owner_id),
        n(now),
        s(CloseReason::SessionEnd.as_str()),
    ];
    let results = db
        .batch(vec![
            // First, so that they fail as the device's, not as questions closed.
            stmt(&db, FAIL_ANSWERS_OF_LINEAGE, &args[..3])?,
            stmt(&db, CLOSE_FOR_LINEAGE, &args)?,
            stmt(&db, REVOKE_TASKS_OF_LINEAGE, &args[..3])?,
            stmt(&db, REVOKE_LINEAGE, &args[..3])?,
            stmt(&db, super::revision::BUMP_REVISION, &[s(owner_id)])?,
        ])
        .await?;
    #[derive(Deserialize)]
    struct Id {
        id: String,
    }
    let ids = |i: usize| -> Result<Vec<String>> {
        Ok(results[i]
            .results::<Id>()?
            .into_iter()
            .map(|r| r.id)
            .collect())
    };
    let mut devices = ids(3)?;
    // The one asked for first, then the rest as they came.
    devices.sort_by_key(|d| d != device_id);
    Ok(Some(RevokedDevice {
        devices,
        tasks: ids(2)?,
        closed: super::questions::closed_by(&results[1])?,
    }))
}

/// Sets or clears a live device's push subscription. Binds ?1 the device id,
/// ?2 the subscription (JSON) or null, ?3 now.
const SET_PUSH: &str = "
UPDATE devices SET push = ?2, push_updated_at = ?3 WHERE id = ?1 AND revoked_at IS NULL";

/// `subscription` is the stored JSON, or `None` to unsubscribe.
pub async fn set_push(
    env: &Env,
    device_id: &str,
    subscription: Option<&str>,
    now: f64,
) -> Result<bool> {
    let db = db(env)?;
    let sub = subscription.map_or(wasm_bindgen::JsValue::NULL, s);
    let r = stmt(&db, SET_PUSH, &[s(device_id), sub, n(now)])?
        .run()
        .await?;
    Ok(changes(&r)? > 0)
}

/// Sets or clears until when a live device's page is looking. Binds ?1 the
/// device id, ?2 until when (ms) or null.
const SET_LOOKING: &str =
    "UPDATE devices SET looking_until = ?2 WHERE id = ?1 AND revoked_at IS NULL";

/// `until`: when the page's presence runs out, or `None`: it is not looking.
pub async fn set_looking(env: &Env, device_id: &str, until: Option<f64>) -> Result<bool> {
    let db = db(env)?;
    let until = until.map_or(wasm_bindgen::JsValue::NULL, n);
    let r = stmt(&db, SET_LOOKING, &[s(device_id), until])?
        .run()
        .await?;
    Ok(changes(&r)? > 0)
}

/// Drops a subscription that its push service says is gone, unless the
/// device subscribed again meanwhile. Binds ?1 the device id, ?2 the stored
/// subscription that was sent to, ?3 now.
const DROP_GONE_PUSH: &str = "
UPDATE devices SET push = NULL, push_updated_at = ?3 WHERE id = ?1 AND push = ?2";

pub async fn drop_gone_push(env: &Env, device_id: &str, stored: &str, now: f64) -> Result<()> {
    let db = db(env)?;
    stmt(&db, DROP_GONE_PUSH, &[s(device_id), s(stored), n(now)])?
        .run()
        .await?;
    Ok(())
}
