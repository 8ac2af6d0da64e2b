//! Pairing devices: an owner (or a device already paired) asks for a
//! one-time code; the new device redeems it for its own credential. The owner
//! lists and revokes devices; a device sees and revokes only itself.

use needs_you_core::api::{self, Right, Rights};
use serde_json::Value;
use worker::{Env, Request};

use crate::config::pairing_ttl_ms;
use crate::ids::{
    new_id, new_token, normalize_code, now_ms, pairing_code, sha256_hex, DEVICE_PREFIX,
};
use crate::json::{name_field, ok, read_object, read_optional_object, ApiError, ApiResult};
use crate::store::{self, NewPairing, Paired, Redeem, Redeemed};
use crate::{auth, limits, live, notifier, relay};

pub const MAX_NAME_CHARS: usize = 100;

/// The `rights` of a body: `None` when absent, else every one named.
fn rights_field(body: &serde_json::Map<String, Value>) -> Result<Option<Rights>, ApiError> {
    match body.get("rights") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value::<Rights>(v.clone())
            .map(Some)
            .map_err(|_| {
                ApiError::bad_request(
                    "invalid_request",
                    format!(
                        "`rights` must be a list of {}",
                        needs_you_core::api::Right::choices()
                    ),
                )
            }),
    }
}

/// `POST /v1/pairings {rights?}`: `{code, url, expires_at, rights}`. The code
/// works once, for the pairing's time, within a few tries; the link carries
/// it after a `#`, which browsers never send to a server. It grants what was
/// asked for (by default all its maker may do), and never more than its
/// maker may do.
pub async fn create(mut req: Request, env: &Env) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Pair)?;
    let body = read_optional_object(&mut req).await?;
    let rights = match rights_field(&body)? {
        Some(asked) => asked.and(&person.rights),
        None => person.rights.clone(),
    };
    let now = now_ms();
    let expires_at = now + pairing_ttl_ms(env);
    // Ids are short: one in use by a live pairing is drawn again.
    for _ in 0..4 {
        let (id, secret) = pairing_code();
        let pairing = NewPairing {
            id: &id,
            owner_id: &person.owner_id,
            secret_hash: &sha256_hex(secret.as_bytes()),
            expires_at,
            made_by: person.device_id.as_deref(),
            rights: &rights,
        };
        match store::create_pairing(env, &pairing, now).await? {
            Paired::Made => {
                let code = format!("{id}-{secret}");
                let url = req.inner().url();
                let origin = crate::urls::origin(&url);
                return ok(
                    201,
                    &api::Pairing {
                        url: format!("{origin}/pair#{code}"),
                        code,
                        expires_at: expires_at as i64,
                        rights,
                        pairing_id: id.clone(),
                    },
                );
            }
            Paired::TooMany => {
                return Err(ApiError::new(
                    429,
                    "too_many_pairings",
                    format!(
                        "{} pairing codes are waiting to be used already; use one, or let them expire (10 minutes)",
                        limits::PAIRING_CODES_PER_OWNER
                    ),
                ))
            }
            Paired::IdTaken => {}
        }
    }
    Err(ApiError::new(
        503,
        "busy",
        "no pairing code is free right now; try again",
    ))
}

fn refused_code() -> ApiError {
    ApiError::bad_request(
        "invalid_code",
        "that pairing code is wrong, used, expired or tried too often; ask for a new one",
    )
}

/// The code in a body, as it is stored.
fn code_field(body: &serde_json::Map<String, Value>) -> Result<(String, String), ApiError> {
    let typed = body.get("code").and_then(|c| c.as_str()).unwrap_or("");
    normalize_code(typed).ok_or_else(refused_code)
}

/// `POST /v1/pairings/check {code}`: whose the code is and what it grants,
/// so that a page can ask "Pair this browser with Ana?" before it pairs.
/// The code is not used; a wrong one counts as one of its tries.
pub async fn check(mut req: Request, env: &Env) -> ApiResult {
    let body = read_object(&mut req).await?;
    let (pairing_id, secret) = code_field(&body)?;
    match store::check_pairing(env, &pairing_id, &sha256_hex(secret.as_bytes()), now_ms()).await? {
        Some(found) => ok(200, &found),
        None => Err(refused_code()),
    }
}

/// `POST /v1/devices {code, name, rights?, key?, seal_key?, proof?}`: the
/// device's credential, shown once, with what it may do: the code's rights,
/// narrowed to those asked for. A device that signs its answers sends its
/// public key and its seal key with the proof of both, kept for its pairer
/// to check ([`super::keys`]).
pub async fn redeem(mut req: Request, env: &Env) -> ApiResult {
    let body = read_object(&mut req).await?;
    let name = name_field(&body, "name", MAX_NAME_CHARS)?;
    let asked = rights_field(&body)?.unwrap_or_else(Rights::all);
    let (pairing_id, secret) = code_field(&body)?;
    let key = super::keys::b64url_field(&body, "key", super::keys::MAX_KEY_CHARS)?;
    let seal_key = super::keys::b64url_field(&body, "seal_key", super::keys::MAX_KEY_CHARS)?;
    let proof = super::keys::b64url_field(&body, "proof", super::keys::MAX_KEY_CHARS)?;
    if key.is_some() != proof.is_some() {
        return Err(ApiError::bad_request(
            "invalid_request",
            "a device's `key` comes with its `proof`",
        ));
    }
    if key.is_some() && seal_key.is_none() {
        // A page or command line from before sealed content: its pairer
        // could give it no content key, and it could read nothing.
        return Err(ApiError::bad_request(
            "upgrade",
            "this page or command line is older than its server: reload the page, or upgrade needs-you, then pair again",
        ));
    }
    let (device_id, token) = (new_id("dev_"), new_token(DEVICE_PREFIX));
    let redeemed = store::redeem_pairing(
        env,
        &Redeem {
            pairing_id: &pairing_id,
            secret_hash: &sha256_hex(secret.as_bytes()),
            request_id: &new_id("r_"),
            device_id: &device_id,
            name: &name,
            token_hash: &sha256_hex(token.as_bytes()),
            asked: &asked,
            key: key.as_deref(),
            seal_key: seal_key.as_deref(),
            proof: proof.as_deref(),
        },
        now_ms(),
    )
    .await?;
    match redeemed {
        Redeemed::Device(rights) => ok(
            201,
            &api::NewDevice {
                device_id,
                name,
                token,
                rights,
            },
        ),
        Redeemed::TooManyDevices => Err(ApiError::new(
            409,
            "too_many_devices",
            format!(
                "this owner has {} devices already: revoke one you no longer use, then pair again",
                limits::DEVICES_PER_OWNER
            ),
        )),
        Redeemed::Refused => Err(refused_code()),
    }
}

/// `GET /v1/devices`: the owner's live devices; a device sees itself only.
pub async fn list(req: Request, env: &Env) -> ApiResult {
    let person = auth::person(&req, env).await?;
    let devices = store::list_devices(env, &person.owner_id, person.device_id.as_deref()).await?;
    ok(200, &api::Devices { devices })
}

/// `DELETE /v1/devices/{id}`: revoked at once, with every device paired from
/// it and every task any of them created. A device may revoke only itself.
pub async fn revoke(req: Request, env: &Env, device_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    if person
        .device_id
        .as_deref()
        .is_some_and(|me| me != device_id)
    {
        return Err(ApiError::not_found());
    }
    let gone = store::revoke_device(env, &person.owner_id, device_id, now_ms())
        .await?
        .ok_or_else(ApiError::not_found)?;
    notifier::closed(env, &gone.closed).await;
    for task in &gone.tasks {
        relay::revoked(env, task).await;
    }
    // The revoked devices' pages stop hearing the list at once.
    for device in &gone.devices {
        live::signed_out(env, &person.owner_id, live::Reader::Device(device)).await;
    }
    live::changed(env, &person.owner_id).await;
    ok(
        200,
        &api::Revoked {
            device_id: device_id.to_owned(),
            revoked: true,
            devices: gone.devices,
            tasks: gone.tasks,
        },
    )
}
