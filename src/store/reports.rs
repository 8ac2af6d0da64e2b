//! Applying a report: one `batch`, which D1 runs as a single transaction.
//!
//! Its first statement claims the session's newest `seq` with a per-request id,
//! and every later statement only acts while that claim holds. A stale or
//! duplicate report therefore changes nothing, even when two reports of one
//! session race; and only a live credential's claim can write at all. The
//! statements that open, supersede and close questions are [`super::questions`]'s.

use serde::Deserialize;
use worker::{Env, Result};

use needs_you_core::Report;

use super::questions;
use super::sql::{db, n, s, stmt, ReportKeys};
use crate::limits;
use crate::question::ClosedQuestion;

/// Claims the session for this request if its `seq` is the newest, only for
/// a live credential, and only while the task's other sessions hold fewer
/// than ?7 open questions (an open binds the limit, a close one that is
/// never reached). Binds the [`ReportKeys`], then ?5 seq, ?6 cli, ?7 the limit.
pub(super) const CLAIM: &str = "
INSERT INTO sessions (task_id, session, last_seq, applied_id, cli, updated_at)
SELECT id, ?2, ?5, ?3, ?6, ?4 FROM tasks
WHERE credential_hash = ?1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?4)
  AND (SELECT COUNT(*) FROM questions q
       WHERE q.task_id = tasks.id AND q.closed_at IS NULL AND q.session <> ?2) < ?7
ON CONFLICT (task_id, session) DO UPDATE SET
  last_seq = excluded.last_seq, applied_id = excluded.applied_id,
  cli = excluded.cli, updated_at = excluded.updated_at
WHERE excluded.last_seq > sessions.last_seq";

/// Records when a live task last reported. Binds the [`ReportKeys`].
pub(super) const TOUCH_TASK: &str = "
UPDATE tasks SET last_report_at = ?4
WHERE credential_hash = ?1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?4)";

/// What the batch did: the credential's task, whether this request's claim
/// held, whether the task still waits, and how many questions its other
/// sessions hold open. Binds ?1 to ?3 of the [`ReportKeys`].
pub(super) const OUTCOME: &str = "
SELECT t.owner_id, t.revoked_at, t.expires_at,
       coalesce((SELECT applied_id FROM sessions WHERE task_id = t.id AND session = ?2) = ?3, 0) AS applied,
       EXISTS (SELECT 1 FROM questions WHERE task_id = t.id AND closed_at IS NULL) AS waiting,
       (SELECT COUNT(*) FROM questions WHERE task_id = t.id AND closed_at IS NULL AND session <> ?2) AS open_elsewhere
FROM tasks t WHERE t.credential_hash = ?1";

/// The session's open question after the batch, if any. Binds ?1 and ?2 of
/// the [`ReportKeys`].
pub(super) const SESSION_OPEN: &str = "
SELECT q.id, q.kind, q.opened_at, q.notified_at FROM questions q
WHERE q.task_id = (SELECT id FROM tasks WHERE credential_hash = ?1) AND q.session = ?2 AND q.closed_at IS NULL";

/// The task behind a credential, as the report's batch found it.
#[derive(Deserialize)]
pub struct ReportTask {
    pub owner_id: String,
    pub revoked_at: Option<i64>,
    pub expires_at: Option<i64>,
    applied: i64,
    waiting: i64,
    open_elsewhere: u32,
}

/// A session's open question, as the notifier needs it.
#[derive(Deserialize)]
pub struct SessionOpen {
    pub id: String,
    pub kind: needs_you_core::Kind,
    pub opened_at: i64,
    pub notified_at: Option<i64>,
}

pub struct ReportOutcome {
    /// The credential's task; `None` for an unknown credential. When it is
    /// revoked or expired, nothing was written.
    pub task: Option<ReportTask>,
    /// The question this report opened, if it opened a new one.
    pub opened: Option<String>,
    /// Questions this report closed (by `close`, or superseded by an `open`).
    pub closed: Vec<ClosedQuestion>,
    /// The session's open question after the report, if any.
    pub session_open: Option<SessionOpen>,
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

    /// An open that was not applied because the task's other sessions hold
    /// [`limits::OPEN_QUESTIONS_PER_TASK`] open questions.
    pub fn crowded(&self, report: &Report) -> bool {
        matches!(report, Report::Open { .. })
            && !self.applied()
            && self
                .task
                .as_ref()
                .is_some_and(|t| t.open_elsewhere >= limits::OPEN_QUESTIONS_PER_TASK)
    }
}

/// Applies one validated report for the task whose credential hashes to
/// `keys.credential_hash`, atomically; see the module doc. `question_id` is
/// the id a question it opens gets.
pub async fn apply_report(
    env: &Env,
    keys: &ReportKeys<'_>,
    report: &Report,
    question_id: &str,
) -> Result<ReportOutcome> {
    let db = db(env)?;
    // A close is never held back by the limit: it only frees room.
    let limit = match report {
        Report::Open { .. } => limits::OPEN_QUESTIONS_PER_TASK,
        Report::Close { .. } => u32::MAX,
    };
    let claim = keys.bind(&[
        n(report.seq() as f64),
        s(report.cli().as_str()),
        n(f64::from(limit)),
    ]);
    let mut batch = vec![stmt(&db, CLAIM, &claim)?];
    match report {
        Report::Open {
            cli,
            seq,
            kind,
            text,
            options,
            terminal,
            takes,
            questions,
            request,
            lasting,
            sealed,
            ..
        } => {
            let options_json = serde_json::to_string(options)
                .map_err(|e| worker::Error::RustError(e.to_string()))?;
            let terminal_json = terminal
                .as_ref()
                .and_then(|t| serde_json::to_string(t).ok());
            let questions_json = (!questions.is_empty())
                .then(|| serde_json::to_string(questions).ok())
                .flatten();
            // Chosen by id and scope, as the reporter read them from its
            // request; a sealed report's words sealed on the machine.
            let offers = sealed.as_deref().map_or(lasting, |s| &s.lasting);
            let decisions_json = (!offers.is_empty() && takes.is_some())
                .then(|| serde_json::to_string(offers).ok())
                .flatten();
            let summary = sealed.as_deref().and_then(|s| s.summary.as_deref());
            let sealed = sealed
                .as_deref()
                .map(|s| (s.words.as_str(), s.same.as_str()));
            let request_json = request
                .as_deref()
                .filter(|_| takes.is_some())
                .and_then(|r| serde_json::to_string(r).ok());
            let same = questions::Sameness {
                kind: *kind,
                text,
                digest: takes.as_ref().map(|t| t.digest.as_str()),
                terminal_json: terminal_json.as_deref(),
                cli: cli.as_str(),
                decisions_json: decisions_json.as_deref(),
                sealed,
                summary,
            };
            batch.push(questions::supersede(&db, keys, &same)?);
            batch.push(questions::open(
                &db,
                keys,
                &questions::NewQuestion {
                    id: question_id,
                    cli: cli.as_str(),
                    kind: *kind,
                    text,
                    options_json: &options_json,
                    seq: *seq,
                    terminal_json: terminal_json.as_deref(),
                    answerable: *kind == needs_you_core::Kind::Reply
                        && terminal
                            .as_ref()
                            .is_some_and(needs_you_core::Terminal::answerable),
                    takes: takes.as_ref(),
                    questions_json: questions_json.as_deref(),
                    decisions_json: decisions_json.as_deref(),
                    request_json: request_json.as_deref(),
                    sealed,
                    summary,
                },
            )?);
            batch.push(questions::reopen_same(&db, keys, *seq, &same)?);
        }
        Report::Close { reason, .. } => {
            batch.push(questions::close_in_session(&db, keys, *reason)?);
        }
    }
    batch.push(stmt(&db, TOUCH_TASK, &keys.bind(&[]))?);
    batch.push(stmt(
        &db,
        super::revision::BUMP_REVISION_OF_APPLIED_REPORT,
        &keys.bind(&[])[..3],
    )?);
    batch.push(stmt(&db, OUTCOME, &keys.bind(&[])[..3])?);
    batch.push(stmt(&db, SESSION_OPEN, &keys.bind(&[])[..2])?);

    let results = db.batch(batch).await?;
    let closed = questions::closed_by(&results[1])?;
    let opened = match report {
        Report::Open { .. } => questions::opened_by(&results[2])?,
        Report::Close { .. } => None,
    };
    let n = results.len();
    let task = results[n - 2].results::<ReportTask>()?.into_iter().next();
    let session_open = results[n - 1].results::<SessionOpen>()?.into_iter().next();
    Ok(ReportOutcome {
        task,
        opened,
        closed,
        session_open,
    })
}
