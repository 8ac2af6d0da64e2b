//! Web Push set-up: the Worker's VAPID public key for the page, and a paired
//! device's subscription and presence. Sending is the notifier's
//! (`channels::webpush`).

use serde_json::{json, Value};
use worker::{Env, Request};

use crate::channels::webpush::Subscription;
use crate::config::{push_services, vapid};
use crate::ids::now_ms;
use crate::json::{ok, read_object, ApiError, ApiResult};
use crate::{auth, store};

/// `GET /v1/push/key`: `{public_key}`, the page's `applicationServerKey`.
pub async fn key(env: &Env) -> ApiResult {
    let key = match vapid(env) {
        Some(Ok(v)) => v.key().await,
        Some(Err(e)) => Err(e.into()),
        None => return Err(not_configured()),
    };
    match key {
        Ok(k) => ok(200, &json!({"public_key": k.public})),
        Err(e) => {
            worker::console_error!("Web Push is misconfigured: {e}");
            Err(not_configured())
        }
    }
}

fn not_configured() -> ApiError {
    ApiError::new(
        404,
        "push_not_configured",
        "this server has no Web Push key (VAPID_PRIVATE_KEY); ntfy and webhooks still work",
    )
}

/// The calling device; the owner token has no push subscription of its own.
async fn device(req: &Request, env: &Env) -> Result<String, ApiError> {
    auth::person(req, env).await?.device_id.ok_or_else(|| {
        ApiError::new(
            403,
            "device_only",
            "only a paired device (nyd_…) has a push subscription",
        )
    })
}

/// `PUT /v1/devices/me/push`: the browser's `PushSubscription` JSON, as is.
/// A new subscription replaces the old one.
pub async fn subscribe(mut req: Request, env: &Env) -> ApiResult {
    let device_id = device(&req, env).await?;
    let body = Value::Object(read_object(&mut req).await?);
    let sub = Subscription::from_browser(&body, &push_services(env))
        .map_err(|e| ApiError::bad_request("invalid_subscription", e.to_string()))?;
    sub.check()
        .await
        .map_err(|e| ApiError::bad_request("invalid_subscription", e.to_string()))?;
    let stored =
        serde_json::to_string(&sub).map_err(|e| worker::Error::RustError(e.to_string()))?;
    if !store::set_push(env, &device_id, Some(&stored), now_ms()).await? {
        return Err(ApiError::unauthorized(
            "unknown or revoked device credential",
        ));
    }
    ok(200, &json!({"device_id": device_id, "push": true}))
}

/// How long a page's "looking" lasts unless said again: the page says it
/// every 20 s while it is open, visible and focused.
pub const LOOKING_FOR_MS: f64 = 30_000.0;

/// `PUT /v1/devices/me/presence {"looking": true|false}`: whether this
/// device's page is open, visible and focused. While one is, the owner's
/// notifications make no sound ([`crate::delivery::quiet`]).
pub async fn presence(mut req: Request, env: &Env) -> ApiResult {
    let device_id = device(&req, env).await?;
    let looking = match read_object(&mut req).await?.get("looking") {
        Some(Value::Bool(b)) => *b,
        _ => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "`looking` must be true or false",
            ))
        }
    };
    let until = looking.then(|| now_ms() + LOOKING_FOR_MS);
    if !store::set_looking(env, &device_id, until).await? {
        return Err(ApiError::unauthorized(
            "unknown or revoked device credential",
        ));
    }
    ok(200, &json!({"device_id": device_id, "looking": looking}))
}

/// `DELETE /v1/devices/me/push`: no more pushes to this device.
pub async fn unsubscribe(req: Request, env: &Env) -> ApiResult {
    let device_id = device(&req, env).await?;
    store::set_push(env, &device_id, None, now_ms()).await?;
    ok(200, &json!({"device_id": device_id, "push": false}))
}
