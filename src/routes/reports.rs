//! `POST /v1/reports`: the one endpoint the reporters call, and the hottest.
//!
//! One D1 batch checks the credential and applies the report; the notifier
//! objects hear of it after the response is sent (`wait_until`): they only
//! follow D1, and the alarm re-reads D1 before it notifies anyone, so the order
//! in which they hear of an open and its close does not matter.

use serde_json::json;
use worker::{Context, Env, Request};

use needs_you_core::{Report, ReportError};

use crate::ids::{new_id, now_ms};
use crate::json::{ok, read_bytes, ApiError, ApiResult};
use crate::limits::{self, Rate};
use crate::store::{ReportKeys, ReportOutcome};
use crate::{auth, notifier, store};

pub async fn post(mut req: Request, env: &Env, ctx: &Context) -> ApiResult {
    let now = now_ms();
    let credential_hash = auth::task_credential_hash(&req)?;
    limits::within_rate(env, Rate::Reports, &credential_hash).await?;
    let bytes = read_bytes(&mut req).await?;
    let report = Report::parse(&bytes).map_err(refusal)?;
    let request_id = new_id("r_");
    let keys = ReportKeys {
        credential_hash: &credential_hash,
        session: report.session(),
        request_id: &request_id,
        now,
    };
    let outcome = store::apply_report(env, &keys, &report, &new_id("q_")).await?;
    auth::live(
        outcome.task.as_ref().map(|t| (t.revoked_at, t.expires_at)),
        now,
    )?;
    if outcome.crowded(&report) {
        return Err(ApiError::new(
            409,
            "too_many_open",
            format!(
                "this task has {} open questions in other sessions already: close some first",
                limits::OPEN_QUESTIONS_PER_TASK
            ),
        ));
    }

    let body = json!({
        "applied": outcome.applied(),
        "question_id": outcome.opened,
        "state": if outcome.waiting() { "waiting" } else { "running" },
    });
    let env = env.clone();
    ctx.wait_until(async move { follow(&env, &report, &outcome, now).await });
    ok(200, &body)
}

/// Tells the notifier objects what the report changed.
async fn follow(env: &Env, report: &Report, outcome: &ReportOutcome, now: f64) {
    notifier::closed(env, &outcome.closed).await;
    if let (Some(id), Report::Open { kind, .. }) = (&outcome.opened, report) {
        if kind.notifies() {
            notifier::arm(env, id, now).await;
        }
    }
}

fn refusal(e: ReportError) -> ApiError {
    let status = if e.code == "too_large" { 413 } else { 400 };
    ApiError::new(status, e.code, e.message)
}
