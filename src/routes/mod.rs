//! The HTTP API (v1): dispatch on method and path, one module per resource.
//! Every answer is JSON; every refusal is `{"error", "message"}` with a 4xx.

mod answers;
mod channels;
mod devices;
mod needs_you;
mod owners;
mod page;
mod push;
mod reports;
mod tasks;

use needs_you_core::report::MAX_BODY_BYTES;
use serde_json::json;
use worker::{Context, Env, Method, Request, Response};

use crate::api::{declared_length, ok, read_bytes, ApiError, ApiResult};

/// Answers one request: the API under `/v1/`, the page's files elsewhere.
/// Every API answer says `Cache-Control: no-store`: it may carry a credential
/// or a person's questions, which no cache should keep.
pub async fn handle(req: Request, env: &Env, ctx: &Context) -> Response {
    if req.path() != "/v1" && !req.path().starts_with("/v1/") {
        return match page::serve(req, env).await {
            Ok(resp) => resp,
            Err(e) => ApiError::from(e).into_response(),
        };
    }
    // A second handle on the same JavaScript request (not its JavaScript
    // `clone()`, which would tee the body), to read what the route left
    // unread; only for a body that [`drain`] would read, so a poll pays nothing.
    let declared = declared_length(&req).unwrap_or(0);
    let body = (1..=MAX_BODY_BYTES as u64)
        .contains(&declared)
        .then(|| Request::from(Clone::clone(req.inner())));
    let resp = match route(req, env, ctx).await {
        Ok(resp) => resp,
        Err(e) => e.into_response(),
    };
    if let Some(mut body) = body {
        drain(&mut body).await;
    }
    let _ = resp.headers().set("cache-control", "no-store");
    resp
}

/// Reads a body that the route answered without reading, as when a request
/// is refused before its body is looked at. workerd (under `wrangler dev` and
/// Miniflare) otherwise resets the kept-alive connection after the answer,
/// without `Connection: close`, so the client's next request on it fails.
/// Only a body of a declared length within the limit (the caller's choice),
/// which is on its way in full: a chunked one may stall, and the answer must
/// not wait on it.
async fn drain(req: &mut Request) {
    if !req.inner().body_used() {
        let _ = read_bytes(req).await;
    }
}

async fn route(req: Request, env: &Env, ctx: &Context) -> ApiResult {
    let path = req.path();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let method = req.method();
    match (method.clone(), parts.as_slice()) {
        (Method::Get, ["v1", "health"]) => ok(200, &json!({"ok": true})),
        (Method::Post, ["v1", "owners"]) => owners::create(req, env).await,
        (Method::Post, ["v1", "owners", "me", "token"]) => owners::rotate(req, env).await,
        (Method::Post, ["v1", "tasks"]) => tasks::create(req, env).await,
        (Method::Get, ["v1", "tasks"]) => tasks::list(req, env).await,
        (Method::Delete, ["v1", "tasks", id]) => tasks::revoke(req, env, id).await,
        (Method::Get, ["v1", "task"]) => tasks::whoami(req, env).await,
        (Method::Post, ["v1", "reports"]) => reports::post(req, env, ctx).await,
        (Method::Get, ["v1", "needs-you"]) => needs_you::list(req, env).await,
        (Method::Get, ["v1", "questions", id, "deliveries"]) => {
            needs_you::deliveries(req, env, id).await
        }
        (Method::Post, ["v1", "questions", id, "dismiss"]) => {
            needs_you::dismiss(req, env, id).await
        }
        (Method::Post, ["v1", "questions", id, "answers"]) => {
            answers::post(req, env, ctx, id).await
        }
        (Method::Get, ["v1", "answers", id]) => answers::get(req, env, id).await,
        (Method::Get, ["v1", "relay"]) => answers::connect(req, env).await,
        (Method::Post, ["v1", "pairings"]) => devices::create(req, env).await,
        (Method::Post, ["v1", "devices"]) => devices::redeem(req, env).await,
        (Method::Get, ["v1", "devices"]) => devices::list(req, env).await,
        (Method::Put, ["v1", "devices", "me", "push"]) => push::subscribe(req, env).await,
        (Method::Delete, ["v1", "devices", "me", "push"]) => push::unsubscribe(req, env).await,
        (Method::Delete, ["v1", "devices", id]) => devices::revoke(req, env, id).await,
        (Method::Get, ["v1", "push", "key"]) => push::key(env),
        (Method::Get, ["v1", "channels"]) => channels::list(req, env).await,
        (Method::Post, ["v1", "channels", "test"]) => channels::test(req, env).await,
        (Method::Put, ["v1", "channels", kind]) => channels::put(req, env, kind).await,
        (Method::Delete, ["v1", "channels", kind]) => channels::delete(req, env, kind).await,
        (
            _,
            ["v1", "health" | "owners" | "tasks" | "task" | "reports" | "needs-you" | "channels"
            | "pairings" | "devices"],
        )
        | (_, ["v1", "tasks" | "channels" | "devices" | "answers", _])
        | (_, ["v1", "questions", _, "deliveries" | "dismiss" | "answers"])
        | (_, ["v1", "relay"])
        | (_, ["v1", "owners", "me", "token"])
        | (_, ["v1", "devices", "me", "push"])
        | (_, ["v1", "push", "key"]) => Err(ApiError::new(
            405,
            "method_not_allowed",
            format!("{} is not allowed on {path}", method.as_ref()),
        )),
        _ => Err(ApiError::new(404, "not_found", format!("no route {path}"))),
    }
}
