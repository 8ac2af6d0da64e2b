//! Devices and their pairing codes.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use worker::{Env, Result};

use super::{changes, db, n, s, stmt};

/// A pairing code is tried this many times at most, then it is dead.
pub const MAX_PAIRING_TRIES: u32 = 5;

/// A new pairing, unless a live one has the same id (then nothing: the caller
/// draws again); an expired or used row with that id is reused. Binds ?1 id,
/// ?2 owner id, ?3 the secret's hash, ?4 now, ?5 when it expires, ?6 the
/// device that made it (null: the owner's token).
const CREATE_PAIRING: &str = "
INSERT INTO pairings (id, owner_id, secret_hash, created_at, expires_at, made_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
ON CONFLICT (id) DO UPDATE SET owner_id = excluded.owner_id, secret_hash = excluded.secret_hash,
  created_at = excluded.created_at, expires_at = excluded.expires_at, tries = 0, used_at = NULL, used_by = NULL,
  made_by = excluded.made_by
WHERE pairings.expires_at <= ?4 OR pairings.used_at IS NOT NULL
RETURNING id";

pub struct NewPairing<'a> {
    pub id: &'a str,
    pub owner_id: &'a str,
    pub secret_hash: &'a str,
    pub expires_at: f64,
    /// The device asking, when a device asks.
    pub made_by: Option<&'a str>,
}

/// Whether the pairing was made (false: its id is taken by a live one).
pub async fn create_pairing(env: &Env, p: &NewPairing<'_>, now: f64) -> Result<bool> {
    let db = db(env)?;
    let args = [
        s(p.id),
        s(p.owner_id),
        s(p.secret_hash),
        n(now),
        n(p.expires_at),
        p.made_by.map_or(wasm_bindgen::JsValue::NULL, s),
    ];
    let rows = stmt(&db, CREATE_PAIRING, &args)?.all().await?;
    Ok(!rows.results::<Value>()?.is_empty())
}

/// Counts a try of a live code. Binds ?1 the id, ?2 now.
const COUNT_TRY: &str = "
UPDATE pairings SET tries = tries + 1 WHERE id = ?1 AND used_at IS NULL AND expires_at > ?2";

/// Uses the code if its secret is right, it has tries left, and the device
/// that made it (if a device did) is not revoked. Binds ?1 the id, ?2 the
/// secret's hash, ?3 now, ?4 this request's id, ?5 the most tries.
const USE_CODE: &str = "
UPDATE pairings SET used_at = ?3, used_by = ?4
WHERE id = ?1 AND secret_hash = ?2 AND used_at IS NULL AND expires_at > ?3 AND tries <= ?5
  AND (made_by IS NULL
       OR EXISTS (SELECT 1 FROM devices d WHERE d.id = pairings.made_by AND d.revoked_at IS NULL))";

/// The device, for the code this request used. Binds ?1 the pairing id, ?2
/// this request's id, ?3 the device id, ?4 its name, ?5 its token's hash, ?6 now.
const CREATE_DEVICE: &str = "
INSERT INTO devices (id, owner_id, name, token_hash, created_at)
SELECT ?3, owner_id, ?4, ?5, ?6 FROM pairings WHERE id = ?1 AND used_by = ?2
RETURNING id";

pub struct Redeem<'a> {
    pub pairing_id: &'a str,
    pub secret_hash: &'a str,
    pub request_id: &'a str,
    pub device_id: &'a str,
    pub name: &'a str,
    pub token_hash: &'a str,
}

/// Turns a code into a device, in one transaction: every try counts, and a
/// code works once, while live and within its tries. False when it did not.
pub async fn redeem_pairing(env: &Env, r: &Redeem<'_>, now: f64) -> Result<bool> {
    let db = db(env)?;
    let results = db
        .batch(vec![
            stmt(&db, COUNT_TRY, &[s(r.pairing_id), n(now)])?,
            stmt(
                &db,
                USE_CODE,
                &[
                    s(r.pairing_id),
                    s(r.secret_hash),
                    n(now),
                    s(r.request_id),
                    n(f64::from(MAX_PAIRING_TRIES)),
                ],
            )?,
            stmt(
                &db,
                CREATE_DEVICE,
                &[
                    s(r.pairing_id),
                    s(r.request_id),
                    s(r.device_id),
                    s(r.name),
                    s(r.token_hash),
                    n(now),
                ],
            )?,
        ])
        .await?;
    Ok(!results[2].results::<Value>()?.is_empty())
}

/// A live device by its credential's hash. Binds ?1 the hash.
const DEVICE_BY_TOKEN_HASH: &str =
    "SELECT id, owner_id FROM devices WHERE token_hash = ?1 AND revoked_at IS NULL";

#[derive(Deserialize)]
pub struct DeviceAuthRow {
    pub id: String,
    pub owner_id: String,
}

pub async fn device_by_token_hash(env: &Env, hash: &str) -> Result<Option<DeviceAuthRow>> {
    let db = db(env)?;
    stmt(&db, DEVICE_BY_TOKEN_HASH, &[s(hash)])?
        .first(None)
        .await
}

/// The owner's live devices, newest first; with ?2, only that one. Binds ?1
/// the owner id, ?2 a device id or null.
const LIST_DEVICES: &str = "
SELECT id AS device_id, name, created_at, push IS NOT NULL AS push FROM devices
WHERE owner_id = ?1 AND revoked_at IS NULL AND (?2 IS NULL OR id = ?2)
ORDER BY created_at DESC";

#[derive(Deserialize, Serialize)]
pub struct DeviceView {
    pub device_id: String,
    pub name: String,
    pub created_at: i64,
    /// Whether the device has a Web Push subscription.
    #[serde(deserialize_with = "super::flag")]
    pub push: bool,
}

pub async fn list_devices(
    env: &Env,
    owner_id: &str,
    only: Option<&str>,
) -> Result<Vec<DeviceView>> {
    let db = db(env)?;
    let only = only.map_or(wasm_bindgen::JsValue::NULL, s);
    stmt(&db, LIST_DEVICES, &[s(owner_id), only])?
        .all()
        .await?
        .results()
}

/// Revokes the owner's device at once, and drops its push subscription.
/// Binds ?1 the device id, ?2 the owner id, ?3 now.
const REVOKE_DEVICE: &str = "
UPDATE devices SET revoked_at = ?3, push = NULL, push_updated_at = ?3
WHERE id = ?1 AND owner_id = ?2 AND revoked_at IS NULL";

/// False when it is not the owner's live device.
pub async fn revoke_device(env: &Env, owner_id: &str, device_id: &str, now: f64) -> Result<bool> {
    let db = db(env)?;
    let r = stmt(&db, REVOKE_DEVICE, &[s(device_id), s(owner_id), n(now)])?
        .run()
        .await?;
    Ok(changes(&r)? > 0)
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
