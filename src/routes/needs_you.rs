//! `GET /v1/needs-you`: the owner's open questions, newest first; the
//! history of every question kept; one question's delivery log; and
//! dismissing a question from the page.

use serde_json::json;

use needs_you_core::api::Right;
use worker::{Env, Request, Response};

use crate::ids::now_ms;
use crate::json::{json_response, ok, ApiError, ApiResult};
use crate::store::Dismissed;
use crate::{auth, limits, listing, live, notifier, store};

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

/// `GET /v1/history?before=CURSOR&limit=N`: the owner's questions, open and
/// closed, newest first, each with every answer it had and the rules those
/// granted. `before` is a page's `next`; `limit` 1 to
/// [`limits::HISTORY_PAGE_MAX`]. The server hands the pages over whole: a
/// search runs on the device.
pub async fn history(req: Request, env: &Env) -> ApiResult {
    let person = auth::person(&req, env).await?;
    let url = req.inner().url();
    let before = match needs_you_core::query::param(&url, "before") {
        None => store::Before::start(),
        Some(cursor) => parse_cursor(&cursor).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_cursor",
                "`before` must be a page's `next`, as the history gave it",
            )
        })?,
    };
    let limit = match needs_you_core::query::param(&url, "limit") {
        None => limits::HISTORY_PAGE,
        Some(l) => l
            .parse::<u32>()
            .ok()
            .filter(|l| (1..=limits::HISTORY_PAGE_MAX).contains(l))
            .ok_or_else(|| {
                ApiError::bad_request(
                    "invalid_request",
                    format!("`limit` must be 1 to {}", limits::HISTORY_PAGE_MAX),
                )
            })?,
    };
    let page = store::history(env, &person.owner_id, &before, limit, now_ms()).await?;
    let next = (page.questions.len() == limit as usize)
        .then(|| page.questions.last())
        .flatten()
        .map(|q| format!("{}:{}", q.opened_at, q.question_id));
    ok(200, &listing::history(page, next))
}

/// A page's `next` read back: `<opened_at>:<question id>`.
fn parse_cursor(cursor: &str) -> Option<store::Before> {
    let (at, id) = cursor.split_once(':')?;
    let opened_at = at.parse::<i64>().ok().filter(|t| *t >= 0)? as f64;
    let id_ok = !id.is_empty()
        && id.len() <= 64
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    id_ok.then(|| store::Before {
        opened_at,
        question_id: id.to_owned(),
    })
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
/// for a question that takes none. For a question whose words are sealed,
/// `sealed` instead: its words, request included, as its machine sealed
/// them for its open `open_seq`, for the device to open. Any reader of the
/// list may read it: the card it gives is what the list shows already.
pub async fn request(req: Request, env: &Env, question_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    let held = store::question_request(env, &person.owner_id, question_id)
        .await?
        .ok_or_else(ApiError::not_found)?;
    let request: Option<serde_json::Value> =
        (held.request.as_deref()).and_then(|r| serde_json::from_str(r).ok());
    let mut body = json!({"question_id": question_id, "kind": held.kind, "request": request});
    if let Some(sealed) = held.sealed {
        body["sealed"] = json!(sealed);
        body["open_seq"] = json!(held.open_seq);
    }
    ok(200, &body)
}
