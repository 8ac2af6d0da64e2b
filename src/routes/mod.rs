//! The HTTP API (v1): dispatch on method and path, one module per resource.
//! Every answer is JSON; every refusal is `{"error", "message"}` with a 4xx.

mod answers;
mod channels;
mod devices;
mod keys;
mod live;
mod needs_you;
mod owners;
mod page;
mod push;
mod relay;
mod reports;
mod rules;
mod screens;
mod tasks;

use needs_you_core::report::MAX_BODY_BYTES;
use serde_json::json;
use worker::{Context, Env, Method, Request, Response};

use crate::json::{declared_length, ok, read_bytes, ApiError, ApiResult};

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

/// One path's methods: the route for each, and 405 for any other.
macro_rules! methods {
    ($method:expr, $path:expr; $($m:ident => $route:expr),+ $(,)?) => {
        match $method {
            $(Method::$m => $route,)+
            other => Err(not_allowed(&other, $path)),
        }
    };
}

/// Dispatches on the path first, then on the method: each path is written
/// once, with its methods beside it.
async fn route(req: Request, env: &Env, ctx: &Context) -> ApiResult {
    let path = req.path();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let method = req.method();
    let p = path.as_str();
    match parts.as_slice() {
        ["v1", "health"] => {
            methods!(method, p; Get => ok(200, &json!({"ok": true, "version": env!("CARGO_PKG_VERSION")})))
        }
        ["v1", "owners"] => methods!(method, p; Post => owners::create(req, env).await),
        ["v1", "owners", "me", "token"] => {
            methods!(method, p; Post => owners::rotate(req, env).await)
        }
        ["v1", "tasks"] => methods!(method, p;
            Post => tasks::create(req, env).await,
            Get => tasks::list(req, env).await),
        ["v1", "tasks", id] => methods!(method, p; Delete => tasks::revoke(req, env, id).await),
        ["v1", "tasks", id, "mute"] => methods!(method, p; Put => tasks::mute(req, env, id).await),
        ["v1", "tasks", id, "name"] => methods!(method, p; Put => tasks::name(req, env, id).await),
        ["v1", "task"] => methods!(method, p; Get => tasks::whoami(req, env).await),
        ["v1", "reports"] => methods!(method, p; Post => reports::post(req, env, ctx).await),
        ["v1", "needs-you"] => methods!(method, p; Get => needs_you::list(req, env).await),
        ["v1", "history"] => methods!(method, p; Get => needs_you::history(req, env).await),
        ["v1", "questions", id, "deliveries"] => {
            methods!(method, p; Get => needs_you::deliveries(req, env, id).await)
        }
        ["v1", "questions", id, "dismiss"] => {
            methods!(method, p; Post => needs_you::dismiss(req, env, id).await)
        }
        ["v1", "questions", id, "request"] => {
            methods!(method, p; Get => needs_you::request(req, env, id).await)
        }
        ["v1", "questions", id, "screen"] => {
            methods!(method, p; Get => screens::get(req, env, id).await)
        }
        ["v1", "questions", id, "answers"] => {
            methods!(method, p; Post => answers::post(req, env, ctx, id).await)
        }
        ["v1", "answers", id] => methods!(method, p;
            Get => answers::get(req, env, id).await,
            Delete => answers::take_back(req, env, id).await),
        ["v1", "rules"] => methods!(method, p; Get => rules::list(req, env).await),
        ["v1", "rules", id] => methods!(method, p; Delete => rules::revoke(req, env, id).await),
        ["v1", "relay"] => methods!(method, p; Get => relay::connect(req, env).await),
        ["v1", "live"] => methods!(method, p;
            Post => live::ticket(req, env).await,
            Get => live::connect(req, env).await),
        ["v1", "pairings"] => methods!(method, p; Post => devices::create(req, env).await),
        ["v1", "pairings", "check"] => methods!(method, p; Post => devices::check(req, env).await),
        ["v1", "pairings", id] => {
            methods!(method, p; Get => keys::pairing_state(req, env, id).await)
        }
        ["v1", "devices"] => methods!(method, p;
            Post => devices::redeem(req, env).await,
            Get => devices::list(req, env).await),
        ["v1", "devices", "me", "presence"] => {
            methods!(method, p; Put => push::presence(req, env).await)
        }
        ["v1", "devices", "me", "push"] => methods!(method, p;
            Put => push::subscribe(req, env).await,
            Delete => push::unsubscribe(req, env).await),
        ["v1", "devices", id] => methods!(method, p; Delete => devices::revoke(req, env, id).await),
        ["v1", "devices", id, "certificate"] => {
            methods!(method, p; Put => keys::certify(req, env, id).await)
        }
        ["v1", "owners", "me", "device-list"] => methods!(method, p;
            Get => keys::device_list(req, env).await,
            Put => keys::set_device_list(req, env).await),
        ["v1", "test", "panic"] => methods!(method, p; Get => crate::panic::on_purpose(env)),
        ["v1", "push", "key"] => methods!(method, p; Get => push::key(env).await),
        ["v1", "channels"] => methods!(method, p; Get => channels::list(req, env).await),
        // `test` is no channel kind: POST tests them all, PUT and DELETE say so.
        ["v1", "channels", "test"] if method == Method::Post => channels::test(req, env).await,
        ["v1", "channels", kind] => methods!(method, p;
            Put => channels::put(req, env, kind).await,
            Delete => channels::delete(req, env, kind).await),
        _ => Err(ApiError::new(404, "not_found", format!("no route {path}"))),
    }
}

fn not_allowed(method: &Method, path: &str) -> ApiError {
    ApiError::new(
        405,
        "method_not_allowed",
        format!("{} is not allowed on {path}", method.as_ref()),
    )
}
