//! Applying a report: one `batch`, which D1 runs as a single transaction.
//!
//! Its first statement claims the session's newest `seq` with a per-request id,
//! and every later statement only acts while that claim holds. A stale or
//! duplicate report therefore changes nothing, even when two reports of one
//! session race; and only a live credential's claim can write at all.

use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{Env, Result};

use needs_you_core::Report;

use super::{db, n, s, stmt};

/// A question that a statement closed, and whether its owner had been notified.
#[derive(Deserialize)]
pub struct Closed {
    pub id: String,
    pub kind: String,
    pub notified_at: Option<i64>,
}

#[derive(Deserialize)]
struct Inserted {
    id: String,
}

/// The task behind a credential, as the report's batch found it.
#[derive(Deserialize)]
pub struct ReportTask {
    pub revoked_at: Option<i64>,
    pub expires_at: Option<i64>,
    applied: i64,
    waiting: i64,
}

pub struct ReportOutcome {
    /// The credential's task; `None` for an unknown credential. When it is
    /// revoked or expired, nothing was written.
    pub task: Option<ReportTask>,
    /// The question this report opened, if it opened a new one.
    pub opened: Option<String>,
    /// Questions this report closed (by `close`, or superseded by an `open`).
    pub closed: Vec<Closed>,
}

impl ReportOutcome {
    /// False when the report was stale (its `seq` not above the last applied).
    pub fn applied(&self) -> bool {
        self.task.as_ref().is_some_and(|t| t.applied != 0)
    }

    /// The task still has an open question.
    pub fn waiting(&self) -> bool {
        self.task.as_ref().is_some_and(|t| t.waiting != 0)
    }
}

/// The credential's task, in every statement of the report's batch. Checking
/// the credential inside the batch saves a D1 round trip on the hottest path.
const TASK: &str = "(SELECT id FROM tasks WHERE credential_hash = ?1)";
/// The credential is live: only then does the claim (and so anything) write.
const LIVE: &str =
    "credential_hash = ?1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?4)";

/// Applies one validated report for the task whose credential hashes to
/// `credential_hash`, atomically; see the module doc. Binds ?1 the hash,
/// ?2 the session, ?3 this request's id, ?4 now, and from ?5 what each
/// statement needs.
pub async fn apply_report(
    env: &Env,
    credential_hash: &str,
    report: &Report,
    request_id: &str,
    question_id: &str,
    now: f64,
) -> Result<ReportOutcome> {
    let db = db(env)?;
    let common = [
        s(credential_hash),
        s(report.session()),
        s(request_id),
        n(now),
    ];
    let with = |extra: &[JsValue]| -> Vec<JsValue> {
        common
            .iter()
            .cloned()
            .chain(extra.iter().cloned())
            .collect()
    };
    let applied = format!(
        "EXISTS (SELECT 1 FROM sessions WHERE task_id = {TASK} AND session = ?2 AND applied_id = ?3)"
    );
    let claim = stmt(
        &db,
        &format!(
            "INSERT INTO sessions (task_id, session, last_seq, applied_id, cli, updated_at)
         SELECT id, ?2, ?5, ?3, ?6, ?4 FROM tasks WHERE {LIVE}
         ON CONFLICT (task_id, session) DO UPDATE SET
           last_seq = excluded.last_seq, applied_id = excluded.applied_id,
           cli = excluded.cli, updated_at = excluded.updated_at
         WHERE excluded.last_seq > sessions.last_seq"
        ),
        &with(&[n(report.seq() as f64), s(report.cli().as_str())]),
    )?;
    let mut batch = vec![claim];
    match report {
        Report::Open {
            cli,
            seq,
            kind,
            text,
            options,
            ..
        } => {
            // An open replaces a different open question; the same one again is a no-op.
            batch.push(stmt(
                &db,
                &format!(
                    "UPDATE questions SET closed_at = ?4, close_reason = 'superseded'
                 WHERE task_id = {TASK} AND session = ?2 AND closed_at IS NULL
                   AND NOT (kind = ?5 AND text = ?6) AND {applied}
                 RETURNING id, kind, notified_at"
                ),
                &with(&[s(kind.as_str()), s(text)]),
            )?);
            let options = serde_json::to_string(options)
                .map_err(|e| worker::Error::RustError(e.to_string()))?;
            batch.push(stmt(&db, &format!(
                "INSERT INTO questions (id, owner_id, task_id, session, cli, kind, text, options, opened_at, open_seq)
                 SELECT ?5, t.owner_id, t.id, ?2, ?6, ?7, ?8, ?9, ?4, ?10 FROM tasks t
                 WHERE t.credential_hash = ?1 AND {applied} AND NOT EXISTS
                   (SELECT 1 FROM questions WHERE task_id = t.id AND session = ?2 AND closed_at IS NULL)
                 RETURNING id"),
                &with(&[s(question_id), s(cli.as_str()), s(kind.as_str()), s(text), s(&options), n(*seq as f64)]))?);
        }
        Report::Close { reason, .. } => {
            batch.push(stmt(
                &db,
                &format!(
                    "UPDATE questions SET closed_at = ?4, close_reason = ?5
                 WHERE task_id = {TASK} AND session = ?2 AND closed_at IS NULL AND {applied}
                 RETURNING id, kind, notified_at"
                ),
                &with(&[s(reason.as_str())]),
            )?);
        }
    }
    batch.push(stmt(
        &db,
        &format!("UPDATE tasks SET last_report_at = ?4 WHERE {LIVE}"),
        &common,
    )?);
    batch.push(stmt(&db,
        "SELECT t.revoked_at, t.expires_at,
                coalesce((SELECT applied_id FROM sessions WHERE task_id = t.id AND session = ?2) = ?3, 0) AS applied,
                EXISTS (SELECT 1 FROM questions WHERE task_id = t.id AND closed_at IS NULL) AS waiting
         FROM tasks t WHERE t.credential_hash = ?1",
        &common[..3])?);

    let results = db.batch(batch).await?;
    let closed: Vec<Closed> = results[1].results()?;
    let opened = match report {
        Report::Open { .. } => results[2]
            .results::<Inserted>()?
            .into_iter()
            .next()
            .map(|r| r.id),
        Report::Close { .. } => None,
    };
    let task = match results.last() {
        Some(r) => r.results::<ReportTask>()?.into_iter().next(),
        None => None,
    };
    Ok(ReportOutcome {
        task,
        opened,
        closed,
    })
}
