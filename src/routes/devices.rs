//! Pairing devices: an owner (or a device already paired) asks for a
//! one-time code; the new device redeems it for its own credential. The owner
//! lists and revokes devices; a device sees and revokes only itself.

use needs_you_core::api;
use serde_json::json;
use worker::{Env, Request};

use crate::auth;
use crate::config::pairing_ttl_ms;
use crate::ids::{
    new_id, new_token, normalize_code, now_ms, pairing_code, sha256_hex, DEVICE_PREFIX,
};
use crate::json::{name_field, ok, read_object, ApiError, ApiResult};
use crate::store::{self, NewPairing, Redeem};

pub const MAX_NAME_CHARS: usize = 100;

/// `POST /v1/pairings`: `{code, url, expires_at}`. The code works once, for
/// the pairing's time, within a few tries; the link carries it after a `#`,
/// which browsers never send to a server.
pub async fn create(req: Request, env: &Env) -> ApiResult {
    let person = auth::person(&req, env).await?;
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
        };
        if store::create_pairing(env, &pairing, now).await? {
            let code = format!("{id}-{secret}");
            let url = req.inner().url();
            let origin = crate::urls::origin(&url);
            return ok(
                201,
                &api::Pairing {
                    url: format!("{origin}/pair#{code}"),
                    code,
                    expires_at: expires_at as i64,
                },
            );
        }
    }
    Err(ApiError::new(
        503,
        "busy",
        "no pairing code is free right now; try again",
    ))
}

/// `POST /v1/devices {code, name}`: the device's credential, shown once.
pub async fn redeem(mut req: Request, env: &Env) -> ApiResult {
    let body = read_object(&mut req).await?;
    let name = name_field(&body, "name", MAX_NAME_CHARS)?;
    let refused = || {
        ApiError::bad_request(
            "invalid_code",
            "that pairing code is wrong, used, expired or tried too often; ask for a new one",
        )
    };
    let typed = body.get("code").and_then(|c| c.as_str()).unwrap_or("");
    let (pairing_id, secret) = normalize_code(typed).ok_or_else(refused)?;
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
        },
        now_ms(),
    )
    .await?;
    if !redeemed {
        return Err(refused());
    }
    ok(
        201,
        &api::NewDevice {
            device_id,
            name,
            token,
        },
    )
}

/// `GET /v1/devices`: the owner's live devices; a device sees itself only.
pub async fn list(req: Request, env: &Env) -> ApiResult {
    let person = auth::person(&req, env).await?;
    let devices = store::list_devices(env, &person.owner_id, person.device_id.as_deref()).await?;
    ok(200, &json!({"devices": devices}))
}

/// `DELETE /v1/devices/{id}`: revoked at once. A device may revoke only itself.
pub async fn revoke(req: Request, env: &Env, device_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    if person
        .device_id
        .as_deref()
        .is_some_and(|me| me != device_id)
    {
        return Err(ApiError::not_found());
    }
    if !store::revoke_device(env, &person.owner_id, device_id, now_ms()).await? {
        return Err(ApiError::not_found());
    }
    ok(200, &json!({"device_id": device_id, "revoked": true}))
}
