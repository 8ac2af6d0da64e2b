//! What the Worker carries for signed answers and cannot check: a device's
//! key, the certificate its pairer signs for it, and the owner's device list
//! (`needs_you_core::signed`). Only the owner's token writes a certificate
//! or a list; the agent's machine checks their signatures against the
//! owner's key it pinned, so a Worker that lied here would be caught there.
//!
//! - `GET /v1/pairings/{id}` (owner): whether the code was used, and the
//!   new device's key and proof, for the pairer to check.
//! - `PUT /v1/devices/{id}/certificate` (owner) `{certificate, content_keys?}`:
//!   kept on the device with the content key wrapped to it (`w1.…` texts,
//!   `needs_you_core::sealed`), which it reads back in `GET /v1/devices`.
//! - `GET`, `PUT /v1/owners/me/device-list` (owner) `{list}`: the newest,
//!   handed to every relay with the answers.

use serde_json::{json, Value};
use worker::{Env, Request};

use needs_you_core::sealed::{WrappedText, MAX_VERSIONS, MAX_WRAPPED_CHARS};
use needs_you_core::signed::{is_b64url, Envelope};

use crate::json::{ok, read_object, ApiError, ApiResult};
use crate::{auth, store};

/// The longest key or proof a device may send: a P-256 key (a signing key,
/// a seal key) is 87 characters of base64url, an HMAC-SHA256 43.
pub const MAX_KEY_CHARS: usize = 128;

/// A base64url text of at most `max` characters in `field`, if there is one.
pub fn b64url_field(
    body: &serde_json::Map<String, Value>,
    field: &str,
    max: usize,
) -> Result<Option<String>, ApiError> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(v)) if v.len() <= max && is_b64url(v) => Ok(Some(v.clone())),
        Some(_) => Err(ApiError::bad_request(
            "invalid_request",
            format!("`{field}` must be base64url, {max} characters at most"),
        )),
    }
}

/// An envelope in `field`, whole and within its size.
fn envelope_field(
    body: &serde_json::Map<String, Value>,
    field: &str,
) -> Result<Envelope, ApiError> {
    body.get(field)
        .and_then(|v| serde_json::from_value::<Envelope>(v.clone()).ok())
        .filter(|e| e.certificate.is_none() && e.well_formed())
        .ok_or_else(|| {
            ApiError::bad_request(
                "invalid_request",
                format!("`{field}` is {{\"statement\", \"signature\", \"key\"}}, each base64url"),
            )
        })
}

pub async fn pairing_state(req: Request, env: &Env, pairing_id: &str) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let state = store::pairing_state(env, &owner.id, pairing_id)
        .await?
        .ok_or_else(ApiError::not_found)?;
    ok(200, &state)
}

/// The wrapped content keys in `content_keys`, if there are: each in its
/// form, within its size, one per version. The Worker cannot open them.
fn wrapped_keys_field(body: &serde_json::Map<String, Value>) -> Result<Option<String>, ApiError> {
    let Some(given) = body.get("content_keys").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let bad = || {
        ApiError::bad_request(
            "invalid_request",
            format!("`content_keys` is a list of at most {MAX_VERSIONS} wrapped keys (`w1.…`), one per version"),
        )
    };
    let keys: Vec<String> = serde_json::from_value(given.clone()).map_err(|_| bad())?;
    let mut versions: Vec<u32> = Vec::new();
    for k in &keys {
        let w = WrappedText::parse(k)
            .filter(|_| k.len() <= MAX_WRAPPED_CHARS)
            .ok_or_else(bad)?;
        if versions.contains(&w.version) {
            return Err(bad());
        }
        versions.push(w.version);
    }
    if keys.len() > MAX_VERSIONS {
        return Err(bad());
    }
    Ok(Some(serde_json::to_string(&keys).unwrap_or_default()))
}

pub async fn certify(mut req: Request, env: &Env, device_id: &str) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let body = read_object(&mut req).await?;
    let certificate = envelope_field(&body, "certificate")?;
    let content_keys = wrapped_keys_field(&body)?;
    let text = serde_json::to_string(&certificate).unwrap_or_default();
    if !store::set_certificate(env, &owner.id, device_id, &text, content_keys.as_deref()).await? {
        return Err(ApiError::not_found());
    }
    ok(200, &json!({"device_id": device_id, "certified": true}))
}

pub async fn device_list(req: Request, env: &Env) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let list: Option<Envelope> = store::device_list(env, &owner.id)
        .await?
        .and_then(|l| serde_json::from_str(&l).ok());
    ok(200, &json!({ "list": list }))
}

pub async fn set_device_list(mut req: Request, env: &Env) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let body = read_object(&mut req).await?;
    let list = envelope_field(&body, "list")?;
    let text = serde_json::to_string(&list).unwrap_or_default();
    store::set_device_list(env, &owner.id, &text).await?;
    ok(200, &json!({ "list": list }))
}
