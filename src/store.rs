//! Every D1 statement the Worker runs.
//!
//! Numbers are bound as f64 (D1 rejects BigInt; milliseconds and `seq` stay exact
//! up to 2^53). A report is applied in one `batch`, which D1 runs as a single
//! transaction: its first statement claims the session's newest `seq` with a
//! per-request id, and every later statement only acts while that claim holds.
//! A stale or duplicate report therefore changes nothing, even when two reports
//! of one session race.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::JsValue;
use worker::{D1Database, D1PreparedStatement, Env, Result};

use needs_you_core::Report;

fn db(env: &Env) -> Result<D1Database> {
    env.d1("DB")
}

fn s(v: &str) -> JsValue {
    JsValue::from_str(v)
}

fn n(v: f64) -> JsValue {
    JsValue::from_f64(v)
}

fn opt_n(v: Option<f64>) -> JsValue {
    v.map_or(JsValue::NULL, JsValue::from_f64)
}

fn stmt(db: &D1Database, sql: &str, args: &[JsValue]) -> Result<D1PreparedStatement> {
    db.prepare(sql).bind(args)
}

// ---- owners and tasks ------------------------------------------------------

pub async fn create_owner(
    env: &Env,
    id: &str,
    name: &str,
    token_hash: &str,
    now: f64,
) -> Result<()> {
    let db = db(env)?;
    stmt(
        &db,
        "INSERT INTO owners (id, name, token_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
        &[s(id), s(name), s(token_hash), n(now)],
    )?
    .run()
    .await?;
    Ok(())
}

pub async fn owner_by_token_hash(env: &Env, hash: &str) -> Result<Option<String>> {
    let db = db(env)?;
    stmt(
        &db,
        "SELECT id FROM owners WHERE token_hash = ?1",
        &[s(hash)],
    )?
    .first::<String>(Some("id"))
    .await
}

#[derive(Deserialize)]
pub struct TaskAuthRow {
    pub id: String,
    pub name: String,
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

pub async fn task_by_credential_hash(env: &Env, hash: &str) -> Result<Option<TaskAuthRow>> {
    let db = db(env)?;
    stmt(
        &db,
        "SELECT id, name, expires_at, revoked_at FROM tasks WHERE credential_hash = ?1",
        &[s(hash)],
    )?
    .first(None)
    .await
}

pub struct NewTask<'a> {
    pub id: &'a str,
    pub owner_id: &'a str,
    pub name: &'a str,
    pub credential_hash: &'a str,
    pub expires_at: Option<f64>,
}

pub async fn create_task(env: &Env, t: &NewTask<'_>, now: f64) -> Result<()> {
    let db = db(env)?;
    stmt(&db, "INSERT INTO tasks (id, owner_id, name, credential_hash, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        &[s(t.id), s(t.owner_id), s(t.name), s(t.credential_hash), n(now), opt_n(t.expires_at)])?
        .run()
        .await?;
    Ok(())
}

#[derive(Deserialize, Serialize)]
pub struct TaskView {
    pub task_id: String,
    pub name: String,
    pub state: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub last_report_at: Option<i64>,
}

/// The owner's live tasks (neither revoked nor expired), newest first.
pub async fn list_tasks(env: &Env, owner_id: &str, now: f64) -> Result<Vec<TaskView>> {
    let db = db(env)?;
    stmt(&db, "SELECT t.id AS task_id, t.name, t.created_at, t.expires_at, t.last_report_at,
                 CASE WHEN EXISTS (SELECT 1 FROM questions q WHERE q.task_id = t.id AND q.closed_at IS NULL)
                      THEN 'waiting' ELSE 'running' END AS state
               FROM tasks t
               WHERE t.owner_id = ?1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2)
               ORDER BY t.created_at DESC",
        &[s(owner_id), n(now)])?
        .all()
        .await?
        .results()
}

/// Revokes the owner's task and closes its open questions. `None` when the task
/// is not this owner's; otherwise the questions it closed.
pub async fn revoke_task(
    env: &Env,
    owner_id: &str,
    task_id: &str,
    now: f64,
) -> Result<Option<Vec<Closed>>> {
    let db = db(env)?;
    let results = db
        .batch(vec![
            stmt(&db, "UPDATE tasks SET revoked_at = ?3 WHERE id = ?1 AND owner_id = ?2 AND revoked_at IS NULL",
                &[s(task_id), s(owner_id), n(now)])?,
            stmt(&db, "UPDATE questions SET closed_at = ?3, close_reason = 'session_end'
                       WHERE task_id = ?1 AND owner_id = ?2 AND closed_at IS NULL
                       RETURNING id, kind, notified_at",
                &[s(task_id), s(owner_id), n(now)])?,
            stmt(&db, "SELECT id FROM tasks WHERE id = ?1 AND owner_id = ?2", &[s(task_id), s(owner_id)])?,
        ])
        .await?;
    if results[2].results::<Value>()?.is_empty() {
        return Ok(None);
    }
    Ok(Some(results[1].results()?))
}

// ---- reports ---------------------------------------------------------------

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

// ---- the "Needs you" list ----------------------------------------------------

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
pub async fn needs_you(env: &Env, owner_id: &str) -> Result<Vec<QuestionView>> {
    let db = db(env)?;
    let rows: Vec<QuestionRow> = stmt(&db,
        "SELECT q.id AS question_id, q.task_id, t.name AS task_name, q.session, q.cli, q.kind, q.text,
                q.options, q.opened_at, q.notified_at
         FROM questions q INDEXED BY questions_open_by_owner JOIN tasks t ON t.id = q.task_id
         WHERE q.owner_id = ?1 AND q.closed_at IS NULL
         ORDER BY q.opened_at DESC",
        &[s(owner_id)])?
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

// ---- channels ----------------------------------------------------------------

pub async fn put_channel(
    env: &Env,
    owner_id: &str,
    kind: &str,
    config: &str,
    now: f64,
) -> Result<()> {
    let db = db(env)?;
    stmt(&db, "INSERT INTO channels (owner_id, kind, config, updated_at) VALUES (?1, ?2, ?3, ?4)
               ON CONFLICT (owner_id, kind) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at",
        &[s(owner_id), s(kind), s(config), n(now)])?
        .run()
        .await?;
    Ok(())
}

pub async fn delete_channel(env: &Env, owner_id: &str, kind: &str) -> Result<bool> {
    let db = db(env)?;
    let r = stmt(
        &db,
        "DELETE FROM channels WHERE owner_id = ?1 AND kind = ?2",
        &[s(owner_id), s(kind)],
    )?
    .run()
    .await?;
    Ok(r.meta()?.and_then(|m| m.changes).unwrap_or(0) > 0)
}

#[derive(Deserialize)]
pub struct ChannelRow {
    pub kind: String,
    pub config: String,
}

pub async fn channels(env: &Env, owner_id: &str) -> Result<Vec<ChannelRow>> {
    let db = db(env)?;
    stmt(
        &db,
        "SELECT kind, config FROM channels WHERE owner_id = ?1 ORDER BY kind",
        &[s(owner_id)],
    )?
    .all()
    .await?
    .results()
}

// ---- the notifier's view -------------------------------------------------------

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
                              q.opened_at, q.closed_at, q.close_reason
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

// ---- clean-up ----------------------------------------------------------------

/// Closed questions are kept this long, then deleted by the cron.
pub const KEEP_CLOSED_MS: f64 = 30.0 * 24.0 * 3600.0 * 1000.0;

pub async fn delete_old_questions(env: &Env, now: f64) -> Result<usize> {
    let db = db(env)?;
    let cutoff = n(now - KEEP_CLOSED_MS);
    let results = db
        .batch(vec![
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
    Ok(results[1].meta()?.and_then(|m| m.changes).unwrap_or(0))
}
