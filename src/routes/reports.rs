//! `POST /v1/reports`: the one endpoint the reporters call, and the hottest.
//!
//! One D1 batch checks the credential and applies the report; then the
//! notifier objects hear of it, before the answer goes out: a runtime that
//! dies right after answering (a deploy, a restart, a kill) must not leave a
//! dialog applied in D1 with no alarm armed, since the reporter, answered,
//! would never send it again. The objects only follow D1, and the alarm
//! re-reads D1 before it notifies anyone, so the order in which they hear of
//! an open and its close does not matter. A retried open (its first answer
//! lost) is stale and changes nothing, but arms its question again: the first
//! try may have died between D1 and the object.

use serde_json::json;
use worker::{Context, Env, Request};

use needs_you_core::{Report, ReportError};

use crate::ids::{new_id, now_ms};
use crate::json::{ok, read_bytes_up_to, ApiError, ApiResult};
use crate::limits::{self, Rate};
use crate::store::{ReportKeys, ReportOutcome};
use crate::{auth, live, notifier, store};

pub async fn post(mut req: Request, env: &Env, ctx: &Context) -> ApiResult {
    let now = now_ms();
    let credential_hash = auth::task_credential_hash(&req)?;
    limits::within_rate(env, Rate::Reports, &credential_hash).await?;
    let bytes = read_bytes_up_to(&mut req, needs_you_core::report::MAX_SEALED_BODY_BYTES).await?;
    // Kept as sent: the reporter built its card from its request, which a
    // device reads again to show and sign (the server reads no request).
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
    follow(env, &report, &outcome).await;
    // The owner's open pages hear of it after the answer: the agent waits
    // on this request, and no page is worth its time.
    if let (true, Some(task)) = (outcome.applied(), &outcome.task) {
        let (env, owner_id) = (env.clone(), task.owner_id.clone());
        ctx.wait_until(async move { live::changed(&env, &owner_id).await });
    }
    ok(200, &body)
}

/// Tells the notifier objects what the report changed: disarms what it
/// closed, and arms the session's open dialog, the one it opened or the one a
/// retry finds still waiting for its first notification. Arming is
/// idempotent: the alarm is due when the question opened plus the delay.
async fn follow(env: &Env, report: &Report, outcome: &ReportOutcome) {
    notifier::closed(env, &outcome.closed).await;
    if let (Some(open), Report::Open { .. }) = (&outcome.session_open, report) {
        if open.kind.notifies() && open.notified_at.is_none() {
            notifier::arm(env, &open.id, open.opened_at as f64).await;
        }
    }
}

fn refusal(e: ReportError) -> ApiError {
    let status = if e.code == "too_large" { 413 } else { 400 };
    ApiError::new(status, e.code, e.message)
}
