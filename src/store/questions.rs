//! The "Needs you" list, and the clean-up of old closed questions.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use worker::{Env, Result};

use super::{db, n, s, stmt};

#[derive(Deserialize)]
struct QuestionRow {
    question_id: String,
    task_id: String,
    task_name: String,
    session: String,
    cli: String,
    kind: String,
    text: String,
    options: String,
    opened_at: i64,
    notified_at: Option<i64>,
}

#[derive(Serialize)]
pub struct QuestionView {
    pub question_id: String,
    pub task_id: String,
    pub task_name: String,
    pub session: String,
    pub cli: String,
    pub kind: String,
    pub text: String,
    pub options: Value,
    pub opened_at: i64,
    pub notified_at: Option<i64>,
}

/// The owner's open questions, newest first. Reads only the partial index of
/// open questions.
pub async fn needs_you(env: &Env, owner_id: &str, now: f64) -> Result<Vec<QuestionView>> {
    let db = db(env)?;
    let rows: Vec<QuestionRow> = stmt(&db,
        "SELECT q.id AS question_id, q.task_id, t.name AS task_name, q.session, q.cli, q.kind, q.text,
                q.options, q.opened_at, q.notified_at
         FROM questions q INDEXED BY questions_open_by_owner JOIN tasks t ON t.id = q.task_id
         WHERE q.owner_id = ?1 AND q.closed_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2)
         ORDER BY q.opened_at DESC",
        &[s(owner_id), n(now)])?
        .all()
        .await?
        .results()?;
    Ok(rows
        .into_iter()
        .map(|r| QuestionView {
            options: serde_json::from_str(&r.options).unwrap_or(Value::Array(Vec::new())),
            question_id: r.question_id,
            task_id: r.task_id,
            task_name: r.task_name,
            session: r.session,
            cli: r.cli,
            kind: r.kind,
            text: r.text,
            opened_at: r.opened_at,
            notified_at: r.notified_at,
        })
        .collect())
}

/// Closed questions are kept this long, then deleted by the cron.
pub const KEEP_CLOSED_MS: f64 = 30.0 * 24.0 * 3600.0 * 1000.0;

pub async fn delete_old_questions(env: &Env, now: f64) -> Result<usize> {
    let db = db(env)?;
    let cutoff = n(now - KEEP_CLOSED_MS);
    let results = db
        .batch(vec![
            // An expired task can no longer report, so nothing would ever close
            // its questions: close them, like a revoke does.
            stmt(
                &db,
                "UPDATE questions SET closed_at = ?1, close_reason = 'session_end'
                 WHERE closed_at IS NULL AND task_id IN (SELECT id FROM tasks WHERE expires_at <= ?1)",
                &[n(now)],
            )?,
            stmt(
                &db,
                "DELETE FROM deliveries WHERE question_id IN
                         (SELECT id FROM questions WHERE closed_at IS NOT NULL AND closed_at < ?1)",
                std::slice::from_ref(&cutoff),
            )?,
            stmt(
                &db,
                "DELETE FROM questions WHERE closed_at IS NOT NULL AND closed_at < ?1",
                std::slice::from_ref(&cutoff),
            )?,
            // Sessions idle as long, with nothing open, are forgotten too.
            stmt(
                &db,
                "DELETE FROM sessions WHERE updated_at < ?1 AND NOT EXISTS
                         (SELECT 1 FROM questions q WHERE q.task_id = sessions.task_id
                            AND q.session = sessions.session AND q.closed_at IS NULL)",
                &[cutoff],
            )?,
        ])
        .await?;
    Ok(results[2].meta()?.and_then(|m| m.changes).unwrap_or(0))
}
