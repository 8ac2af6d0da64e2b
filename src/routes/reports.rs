//! `POST /v1/reports`: the one endpoint the reporters call.

use serde_json::json;
use worker::{Env, Request};

use needs_you_core::{Report, ReportError};

use crate::api::{ok, ApiError, ApiResult};
use crate::ids::{new_id, now_ms};
use crate::{auth, notifier, store};

pub async fn post(mut req: Request, env: &Env) -> ApiResult {
    let now = now_ms();
    let task = auth::task(&req, env, now).await?;
    let bytes = req.bytes().await?;
    let report = Report::parse(&bytes).map_err(refusal)?;
    let outcome = store::apply_report(
        env,
        &task.owner_id,
        &task.id,
        &report,
        &new_id("r_"),
        &new_id("q_"),
        now,
    )
    .await?;

    // D1 has the truth now; the notifier objects only follow it. A failure to
    // reach one is logged, not returned: the report itself was applied.
    for q in &outcome.closed {
        if let Err(e) = notifier::closed(env, &q.id, q.notified_at.is_some()).await {
            worker::console_error!("could not reach the notifier of {}: {e}", q.id);
        }
    }
    if let (Some(id), Report::Open { kind, .. }) = (&outcome.opened, &report) {
        if kind.notifies() {
            if let Err(e) = notifier::arm(env, id, now).await {
                worker::console_error!("could not arm the notifier of {id}: {e}");
            }
        }
    }
    ok(
        200,
        &json!({
            "applied": outcome.applied,
            "question_id": outcome.opened,
            "state": if outcome.waiting { "waiting" } else { "running" },
        }),
    )
}

fn refusal(e: ReportError) -> ApiError {
    let status = if e.code == "too_large" { 413 } else { 400 };
    ApiError::new(status, e.code, e.message)
}
