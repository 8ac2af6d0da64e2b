//! `GET /v1/needs-you`: the owner's open questions, newest first; one
//! question's delivery log; and dismissing a question from the page.

use serde_json::json;

use needs_you_core::api::Right;
use worker::{Env, Request, Response};

use crate::ids::now_ms;
use crate::json::{json_response, ok, ApiError, ApiResult};
use crate::store::Dismissed;
use crate::{auth, listing, live, notifier, store};

/// `GET /v1/needs-you`: `{questions, tasks}`, with an `ETag`. A page that
/// sends its last ETag in `If-None-Match` gets `304` while nothing changed,
/// after one read of the owner's revision. The ETag also carries the minute,
/// so that ages and expiries move on even in a quiet list.
pub async fn list(req: Request, env: &Env) -> ApiResult {
    let person = auth::person(&req, env).await?;
    let now = now_ms();
    let minute = (now / 60_000.0) as i64;
    let etag = |revision: i64| needs_you_core::live::etag(revision, minute);
    let sent = req.headers().get("if-none-match").ok().flatten();
    if let Some(sent) = sent {
        let revision = store::list_revision(env, &person.owner_id).await?;
        if sent == etag(revision) {
            let resp = Response::empty()?.with_status(304);
            resp.headers().set("etag", &sent)?;
            return Ok(resp);
        }
    }
    let page = store::list_page(env, &person.owner_id, now).await?;
    let list = listing::needs_you(&page, person.rights.has(Right::Screen));
    let resp = json_response(200, &list)?;
    resp.headers().set("etag", &etag(page.revision))?;
    Ok(resp)
}

/// `GET /v1/questions/{id}/deliveries`: every delivery attempt for one of the
/// owner's questions, oldest first.
pub async fn deliveries(req: Request, env: &Env, question_id: &str) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let log = store::delivery_log(env, &owner.id, question_id)
        .await?
        .ok_or_else(ApiError::not_found)?;
    ok(200, &json!({"question_id": question_id, "deliveries": log}))
}

/// `POST /v1/questions/{id}/dismiss`: "not needed" from the page. The question
/// closes with the reason `dismissed`, and its channels hear of it like after
/// any close.
pub async fn dismiss(req: Request, env: &Env, question_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Answer)?;
    match store::dismiss(env, &person.owner_id, question_id, now_ms()).await? {
        Dismissed::Closed(closed) => {
            notifier::closed(env, &closed).await;
            live::changed(env, &person.owner_id).await;
            ok(200, &json!({"question_id": question_id, "closed": true}))
        }
        Dismissed::AlreadyClosed => Err(ApiError::new(
            409,
            "closed",
            "that question is closed already",
        )),
        Dismissed::NotFound => Err(ApiError::not_found()),
    }
}

/// `GET /v1/questions/{id}/request`: the request a question takes an answer
/// for, as its CLI gave it, so that a device builds the card itself
/// (`needs_you_core::classify::card`) and signs the digest it computes; null
/// for a question that takes none. Any reader of the list may read it: the
/// card it gives is what the list shows already.
pub async fn request(req: Request, env: &Env, question_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    let (kind, request) = store::question_request(env, &person.owner_id, question_id)
        .await?
        .ok_or_else(ApiError::not_found)?;
    let request: Option<serde_json::Value> = request.and_then(|r| serde_json::from_str(&r).ok());
    ok(
        200,
        &json!({"question_id": question_id, "kind": kind, "request": request}),
    )
}
