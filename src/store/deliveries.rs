//! What a notifier's alarm reads and writes: its question, the owner's
//! channels, and the record of every delivery attempt.

use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{Env, Result};

use super::{db, n, opt_n, s, stmt, ChannelRow};

/// What the alarm needs to know about its question.
#[derive(Deserialize)]
pub struct AlarmQuestion {
    pub id: String,
    pub task_id: String,
    pub task_name: String,
    pub cli: String,
    pub kind: String,
    pub text: String,
    pub options: String,
    pub opened_at: i64,
    pub closed_at: Option<i64>,
    pub close_reason: Option<String>,
    pub task_expires_at: Option<i64>,
}

/// Past attempts of one (channel, event): how many, and whether one succeeded.
#[derive(Deserialize)]
pub struct AttemptSummary {
    pub channel: String,
    pub event: String,
    pub attempts: i64,
    pub ok: i64,
}

pub struct AlarmView {
    pub question: AlarmQuestion,
    pub channels: Vec<ChannelRow>,
    pub attempts: Vec<AttemptSummary>,
}

pub async fn alarm_view(env: &Env, question_id: &str) -> Result<Option<AlarmView>> {
    let db = db(env)?;
    let results = db
        .batch(vec![
            stmt(&db, "SELECT q.id, q.task_id, t.name AS task_name, q.cli, q.kind, q.text, q.options,
                              q.opened_at, q.closed_at, q.close_reason, t.expires_at AS task_expires_at
                       FROM questions q JOIN tasks t ON t.id = q.task_id WHERE q.id = ?1",
                &[s(question_id)])?,
            stmt(&db, "SELECT kind, config FROM channels
                       WHERE owner_id = (SELECT owner_id FROM questions WHERE id = ?1) ORDER BY kind",
                &[s(question_id)])?,
            stmt(&db, "SELECT channel, event, COUNT(*) AS attempts, MAX(ok) AS ok FROM deliveries
                       WHERE question_id = ?1 GROUP BY channel, event",
                &[s(question_id)])?,
        ])
        .await?;
    let Some(question) = results[0].results::<AlarmQuestion>()?.into_iter().next() else {
        return Ok(None);
    };
    Ok(Some(AlarmView {
        question,
        channels: results[1].results()?,
        attempts: results[2].results()?,
    }))
}

pub struct Attempt<'a> {
    pub question_id: &'a str,
    pub channel: &'a str,
    pub event: &'a str,
    pub attempt: u32,
    pub ok: bool,
    pub status: Option<u16>,
    pub error: Option<&'a str>,
}

pub async fn record_attempt(env: &Env, a: &Attempt<'_>, now: f64) -> Result<()> {
    let db = db(env)?;
    stmt(
        &db,
        "INSERT INTO deliveries (question_id, channel, event, attempt, at, ok, status, error)
               VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        &[
            s(a.question_id),
            s(a.channel),
            s(a.event),
            n(a.attempt as f64),
            n(now),
            n(if a.ok { 1.0 } else { 0.0 }),
            opt_n(a.status.map(f64::from)),
            a.error.map_or(JsValue::NULL, s),
        ],
    )?
    .run()
    .await?;
    Ok(())
}

/// Records the first notification, and tells whether the question closed meanwhile.
pub async fn mark_notified(env: &Env, question_id: &str, now: f64) -> Result<bool> {
    let db = db(env)?;
    let results = db
        .batch(vec![
            stmt(
                &db,
                "UPDATE questions SET notified_at = ?2 WHERE id = ?1 AND notified_at IS NULL",
                &[s(question_id), n(now)],
            )?,
            stmt(
                &db,
                "SELECT closed_at FROM questions WHERE id = ?1",
                &[s(question_id)],
            )?,
        ])
        .await?;
    #[derive(Deserialize)]
    struct Row {
        closed_at: Option<i64>,
    }
    Ok(results[1]
        .results::<Row>()?
        .into_iter()
        .next()
        .is_some_and(|r| r.closed_at.is_some()))
}

impl AlarmView {
    /// Past attempts of `event` on the channel `kind`.
    pub fn summary(&self, kind: &str, event: crate::channels::Event) -> Option<&AttemptSummary> {
        self.attempts
            .iter()
            .find(|a| a.channel == kind && a.event == event.as_str())
    }

    /// Whether any channel has received `event` for this question.
    pub fn delivered(&self, event: crate::channels::Event) -> bool {
        self.attempts
            .iter()
            .any(|a| a.event == event.as_str() && a.ok != 0)
    }
}

/// Whether the question has closed (or is gone).
pub async fn is_closed(env: &Env, question_id: &str) -> Result<bool> {
    let db = db(env)?;
    #[derive(Deserialize)]
    struct Row {
        closed_at: Option<i64>,
    }
    let row: Option<Row> = stmt(
        &db,
        "SELECT closed_at FROM questions WHERE id = ?1",
        &[s(question_id)],
    )?
    .first(None)
    .await?;
    Ok(row.is_none_or(|r| r.closed_at.is_some()))
}
