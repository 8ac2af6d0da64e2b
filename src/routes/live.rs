//! `POST /v1/live` and `GET /v1/live`: the socket that keeps the page's list
//! (and `needs-you ls --watch`) up to date. The credential asks for a
//! ticket, and the socket spends it: no credential in a URL.

use serde_json::json;
use worker::{Env, Request};

use crate::json::{ok, websocket_upgrade, ApiError, ApiResult};
use crate::limits::{self, Rate};
use crate::{auth, live};

/// `POST /v1/live`: `{ticket}`, good for one socket with the caller's
/// rights over the list, for half a minute.
pub async fn ticket(req: Request, env: &Env) -> ApiResult {
    let person = auth::person(&req, env).await?;
    limits::within_rate(env, Rate::Tickets, &person.credential_hash).await?;
    match live::ticket(env, &person).await? {
        Some(ticket) => ok(200, &json!({ "ticket": ticket })),
        None => Err(ApiError::new(
            429,
            "too_many_tickets",
            "too many tickets of this credential wait to be spent: open a socket with one first",
        )),
    }
}

/// `GET /v1/live?ticket=…` with `Upgrade: websocket`.
pub async fn connect(req: Request, env: &Env) -> ApiResult {
    websocket_upgrade(&req, "the live list")?;
    let url = req.inner().url();
    let ticket = needs_you_core::query::param(&url, "ticket").unwrap_or_default();
    let refused = || {
        ApiError::unauthorized("unknown, spent or expired ticket: ask POST /v1/live for another")
    };
    let resp = live::connect(env, &ticket).await?.ok_or_else(refused)?;
    if resp.status_code() == 401 {
        return Err(refused());
    }
    Ok(resp)
}
