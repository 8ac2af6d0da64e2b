//! A question's life: opened by a report, superseded by the next one, closed
//! (answered, revoked with its task, expired, dismissed), marked notified, and
//! deleted 30 days after it closed. Every statement that changes a question is
//! here. Each close returns the questions it closed as [`ClosedQuestion`]s,
//! which the caller hands to `notifier::closed`, whatever closed them.

use needs_you_core::{CloseReason, Kind};
use serde::Deserialize;
use worker::{D1Database, D1PreparedStatement, D1Result, Env, Result};

use super::sql::{changes, db, n, s, stmt, ReportKeys};
use crate::question::{ClosedQuestion, Question};

// ---- open and supersede: statements of the report's batch ----------------------

/// Opens a question for the session, unless one is already open there (the
/// same question again), and only while this request holds the session's claim.
/// Binds the [`ReportKeys`], then ?5 the new question's id, ?6 cli, ?7 kind,
/// ?8 text, ?9 options (JSON), ?10 seq, ?11 terminal (JSON or null),
/// ?12 answerable (0 or 1), ?13 what it takes from afar, ?14 its request's
/// digest, ?15 a dialog's questions (JSON), ?16 a permission's lasting
/// choices (JSON), ?17 the request it takes an answer for (JSON), ?18 its
/// sealed words, ?19 their sameness key, ?20 its sealed summary, each null
/// when none.
pub(super) const OPEN: &str = "
INSERT INTO questions (id, owner_id, task_id, session, cli, kind, text, options, opened_at, open_seq,
                       terminal, answerable, takes, digest, questions, decisions, request, sealed, same,
                       summary)
SELECT ?5, t.owner_id, t.id, ?2, ?6, ?7, ?8, ?9, ?4, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20
FROM tasks t
WHERE t.credential_hash = ?1
  AND EXISTS (SELECT 1 FROM sessions s WHERE s.task_id = t.id AND s.session = ?2 AND s.applied_id = ?3)
  AND NOT EXISTS (SELECT 1 FROM questions q WHERE q.task_id = t.id AND q.session = ?2 AND q.closed_at IS NULL)
RETURNING id";

/// Closes the session's open question when a different one opens, while
/// this request holds the claim. The same question is the same kind, text,
/// request digest, agent, terminal, lasting choices and sealed words'
/// sameness key (which covers the lasting choices of sealed words, whose
/// words are sealed afresh at each report): left open (a report that changed where the card says it
/// runs, or what it offers, is another question). Binds the [`ReportKeys`],
/// then ?5 the close reason, ?6 the new kind, ?7 the new text, ?8 the new
/// digest, ?9 the new terminal (JSON), ?10 the new cli, ?11 the new lasting
/// choices (JSON), ?12 the new sameness key (each null when none).
pub(super) const SUPERSEDE: &str = "
UPDATE questions SET closed_at = ?4, close_reason = ?5
WHERE task_id = (SELECT id FROM tasks WHERE credential_hash = ?1) AND session = ?2 AND closed_at IS NULL
  AND NOT (kind = ?6 AND text = ?7 AND digest IS ?8 AND terminal IS ?9 AND cli = ?10
           AND (decisions IS ?11 OR ?12 IS NOT NULL) AND same IS ?12)
  AND EXISTS (SELECT 1 FROM sessions s WHERE s.task_id = questions.task_id AND s.session = ?2 AND s.applied_id = ?3)
RETURNING id, kind, notified_at";

/// The same question opened again (as [`SUPERSEDE`] says): it stays, now
/// known by the `seq` of the machine's newest open of it, which an answer
/// made from now on names, and its sealed words by those sealed for that
/// open (their scope names it). Binds the [`ReportKeys`], then ?5 the seq,
/// ?6 to ?12 as [`SUPERSEDE`]'s, ?13 the sealed words, ?14 the sealed
/// summary (null when none).
pub(super) const REOPEN_SAME: &str = "
UPDATE questions SET open_seq = ?5, sealed = ?13, summary = ?14
WHERE task_id = (SELECT id FROM tasks WHERE credential_hash = ?1) AND session = ?2 AND closed_at IS NULL
  AND kind = ?6 AND text = ?7 AND digest IS ?8 AND terminal IS ?9 AND cli = ?10
  AND (decisions IS ?11 OR ?12 IS NOT NULL) AND same IS ?12
  AND EXISTS (SELECT 1 FROM sessions s WHERE s.task_id = questions.task_id AND s.session = ?2 AND s.applied_id = ?3)";

/// Closes the session's open question, while this request holds the claim.
/// Binds the [`ReportKeys`], then ?5 the close reason.
pub(super) const CLOSE_IN_SESSION: &str = "
UPDATE questions SET closed_at = ?4, close_reason = ?5
WHERE task_id = (SELECT id FROM tasks WHERE credential_hash = ?1) AND session = ?2 AND closed_at IS NULL
  AND EXISTS (SELECT 1 FROM sessions s WHERE s.task_id = questions.task_id AND s.session = ?2 AND s.applied_id = ?3)
RETURNING id, kind, notified_at";

/// The open question's new row: what [`open`] binds.
pub struct NewQuestion<'a> {
    pub id: &'a str,
    pub cli: &'a str,
    pub kind: Kind,
    pub text: &'a str,
    pub options_json: &'a str,
    pub seq: u64,
    /// The report's `terminal`, as JSON.
    pub terminal_json: Option<&'a str>,
    /// A reply in a terminal that answers can be typed into.
    pub answerable: bool,
    /// What it takes from afar, and the digest an answer must carry.
    pub takes: Option<&'a needs_you_core::afar::Takes>,
    /// A dialog's questions, as JSON.
    pub questions_json: Option<&'a str>,
    /// A permission's lasting choices, as JSON.
    pub decisions_json: Option<&'a str>,
    /// The request it takes an answer from afar for, as JSON.
    pub request_json: Option<&'a str>,
    /// Its sealed words, and their sameness key.
    pub sealed: Option<(&'a str, &'a str)>,
    /// Its sealed summary.
    pub summary: Option<&'a str>,
}

pub(super) fn open(
    db: &D1Database,
    keys: &ReportKeys,
    q: &NewQuestion,
) -> Result<D1PreparedStatement> {
    let extra = [
        s(q.id),
        s(q.cli),
        s(q.kind.as_str()),
        s(q.text),
        s(q.options_json),
        n(q.seq as f64),
        q.terminal_json.map_or(wasm_bindgen::JsValue::NULL, s),
        n(if q.answerable { 1.0 } else { 0.0 }),
        q.takes
            .map_or(wasm_bindgen::JsValue::NULL, |t| s(t.takes.as_str())),
        q.takes
            .map_or(wasm_bindgen::JsValue::NULL, |t| s(&t.digest)),
        q.questions_json.map_or(wasm_bindgen::JsValue::NULL, s),
        q.decisions_json.map_or(wasm_bindgen::JsValue::NULL, s),
        q.request_json.map_or(wasm_bindgen::JsValue::NULL, s),
        q.sealed.map_or(wasm_bindgen::JsValue::NULL, |(w, _)| s(w)),
        q.sealed
            .map_or(wasm_bindgen::JsValue::NULL, |(_, same)| s(same)),
        q.summary.map_or(wasm_bindgen::JsValue::NULL, s),
    ];
    stmt(db, OPEN, &keys.bind(&extra))
}

/// What makes an open the same question as the one open: [`SUPERSEDE`]'s
/// and [`REOPEN_SAME`]'s ?6 to ?11.
pub(super) struct Sameness<'a> {
    pub kind: Kind,
    pub text: &'a str,
    pub digest: Option<&'a str>,
    pub terminal_json: Option<&'a str>,
    pub cli: &'a str,
    pub decisions_json: Option<&'a str>,
    /// Its sealed words' sameness key, and the words and summary (set by a
    /// reopen).
    pub sealed: Option<(&'a str, &'a str)>,
    pub summary: Option<&'a str>,
}

impl Sameness<'_> {
    fn bind(&self) -> [wasm_bindgen::JsValue; 7] {
        [
            s(self.kind.as_str()),
            s(self.text),
            self.digest.map_or(wasm_bindgen::JsValue::NULL, s),
            self.terminal_json.map_or(wasm_bindgen::JsValue::NULL, s),
            s(self.cli),
            self.decisions_json.map_or(wasm_bindgen::JsValue::NULL, s),
            self.sealed
                .map_or(wasm_bindgen::JsValue::NULL, |(_, same)| s(same)),
        ]
    }
}

pub(super) fn supersede(
    db: &D1Database,
    keys: &ReportKeys,
    same: &Sameness,
) -> Result<D1PreparedStatement> {
    let mut extra = vec![s(CloseReason::Superseded.as_str())];
    extra.extend(same.bind());
    stmt(db, SUPERSEDE, &keys.bind(&extra))
}

pub(super) fn reopen_same(
    db: &D1Database,
    keys: &ReportKeys,
    seq: u64,
    same: &Sameness,
) -> Result<D1PreparedStatement> {
    let mut extra = vec![n(seq as f64)];
    extra.extend(same.bind());
    extra.push(
        same.sealed
            .map_or(wasm_bindgen::JsValue::NULL, |(w, _)| s(w)),
    );
    extra.push(same.summary.map_or(wasm_bindgen::JsValue::NULL, s));
    stmt(db, REOPEN_SAME, &keys.bind(&extra))
}

pub(super) fn close_in_session(
    db: &D1Database,
    keys: &ReportKeys,
    reason: CloseReason,
) -> Result<D1PreparedStatement> {
    stmt(db, CLOSE_IN_SESSION, &keys.bind(&[s(reason.as_str())]))
}

/// The questions that a close statement of a batch returned.
pub(super) fn closed_by(result: &D1Result) -> Result<Vec<ClosedQuestion>> {
    result.results()
}

/// The id of the question that [`open`] inserted, if it did.
pub(super) fn opened_by(result: &D1Result) -> Result<Option<String>> {
    #[derive(Deserialize)]
    struct Inserted {
        id: String,
    }
    Ok(result
        .results::<Inserted>()?
        .into_iter()
        .next()
        .map(|r| r.id))
}

// ---- close: with a task, on expiry -------------------------------------------------

/// Closes every open question of the owner's task.
/// Binds ?1 the task id, ?2 the owner id, ?3 now, ?4 the close reason.
const CLOSE_FOR_TASK: &str = "
UPDATE questions SET closed_at = ?3, close_reason = ?4
WHERE task_id = ?1 AND owner_id = ?2 AND closed_at IS NULL
RETURNING id, kind, notified_at";

pub(super) fn close_for_task(
    db: &D1Database,
    task_id: &str,
    owner_id: &str,
    reason: CloseReason,
    now: f64,
) -> Result<D1PreparedStatement> {
    stmt(
        db,
        CLOSE_FOR_TASK,
        &[s(task_id), s(owner_id), n(now), s(reason.as_str())],
    )
}

/// Closes the open questions of every expired task: such a task can no longer
/// report, so nothing else would ever close them.
/// Binds ?1 now, ?2 the close reason.
const CLOSE_EXPIRED: &str = "
UPDATE questions SET closed_at = ?1, close_reason = ?2
WHERE closed_at IS NULL AND task_id IN (SELECT id FROM tasks WHERE expires_at <= ?1)
RETURNING id, kind, notified_at";

pub async fn close_expired(env: &Env, now: f64) -> Result<Vec<ClosedQuestion>> {
    let db = db(env)?;
    let reason = CloseReason::SessionEnd.as_str();
    stmt(&db, CLOSE_EXPIRED, &[n(now), s(reason)])?
        .all()
        .await?
        .results()
}

/// Closes the owner's open question from the page. Binds ?1 the question id,
/// ?2 the owner id, ?3 now, ?4 the close reason.
const DISMISS: &str = "
UPDATE questions SET closed_at = ?3, close_reason = ?4
WHERE id = ?1 AND owner_id = ?2 AND closed_at IS NULL
RETURNING id, kind, notified_at";

/// Whether the question is the owner's, and if so whether it is closed.
/// Binds ?1 the question id, ?2 the owner id.
const OWNERS_QUESTION: &str = "SELECT closed_at FROM questions WHERE id = ?1 AND owner_id = ?2";

/// What dismissing did.
pub enum Dismissed {
    Closed(Vec<ClosedQuestion>),
    AlreadyClosed,
    NotFound,
}

/// Closes the owner's question with the reason `dismissed`.
pub async fn dismiss(env: &Env, owner_id: &str, question_id: &str, now: f64) -> Result<Dismissed> {
    let db = db(env)?;
    let reason = CloseReason::Dismissed.as_str();
    let results = db
        .batch(vec![
            stmt(
                &db,
                DISMISS,
                &[s(question_id), s(owner_id), n(now), s(reason)],
            )?,
            stmt(&db, OWNERS_QUESTION, &[s(question_id), s(owner_id)])?,
            stmt(
                &db,
                super::revision::BUMP_REVISION_IF_CLOSED_NOW,
                &[s(question_id), s(owner_id), n(now)],
            )?,
        ])
        .await?;
    let closed = closed_by(&results[0])?;
    if !closed.is_empty() {
        return Ok(Dismissed::Closed(closed));
    }
    Ok(if results[1].results::<serde_json::Value>()?.is_empty() {
        Dismissed::NotFound
    } else {
        Dismissed::AlreadyClosed
    })
}

// ---- notify ------------------------------------------------------------------------

/// Records the first notification, and the device whose presence made it
/// quiet, if one did. Binds ?1 the question id, ?2 now, ?3 that device's
/// name (or null).
pub(super) const MARK_NOTIFIED: &str =
    "UPDATE questions SET notified_at = ?2, quieted_by = ?3 WHERE id = ?1 AND notified_at IS NULL";

/// Records the first notification; `quieted_by`, the device whose page was
/// looking, so the ring made no sound.
pub async fn mark_notified(
    env: &Env,
    question_id: &str,
    now: f64,
    quieted_by: Option<&str>,
) -> Result<()> {
    let db = db(env)?;
    let by = quieted_by.map_or(wasm_bindgen::JsValue::NULL, s);
    // The card says when it rang, and whose page made it quiet.
    db.batch(vec![
        stmt(
            &db,
            super::revision::BUMP_REVISION_IF_NOT_NOTIFIED,
            &[s(question_id)],
        )?,
        stmt(&db, MARK_NOTIFIED, &[s(question_id), n(now), by])?,
    ])
    .await?;
    Ok(())
}

// ---- read --------------------------------------------------------------------------

/// The columns of a question with its task, `q` and `t`: every one that
/// `crate::question::Question` reads, each statement that returns questions
/// selects them all.
macro_rules! question_columns {
    () => {
        "q.id AS question_id, q.task_id, t.name AS task_name, t.sealed_name AS task_sealed_name,
       q.session, q.cli, q.kind, q.text,
       q.options, q.opened_at, q.notified_at, q.quieted_by, q.closed_at, q.close_reason,
       q.terminal, q.answerable, q.takes, q.digest, q.open_seq, q.questions, q.decisions, q.owner_id,
       t.expires_at AS task_expires_at, t.revoked_at AS task_revoked_at,
       t.muted_until AS task_muted_until, t.screen AS task_screen, q.sealed IS NOT NULL AS sealed,
       q.summary"
    };
}

/// The owner's open questions of live tasks, the newest ?3 of them, newest
/// first, from the partial index of open questions only. Binds ?1 the owner
/// id, ?2 now, ?3 how many.
pub(super) const NEEDS_YOU: &str = concat!(
    "
SELECT ",
    question_columns!(),
    "
FROM questions q INDEXED BY questions_open_by_owner JOIN tasks t ON t.id = q.task_id
WHERE q.owner_id = ?1 AND q.closed_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2)
ORDER BY q.opened_at DESC LIMIT ?3"
);

/// How many questions [`NEEDS_YOU`] would list without its limit. Binds ?1
/// the owner id, ?2 now.
pub(super) const NEEDS_YOU_COUNT: &str = "
SELECT COUNT(*) AS n
FROM questions q INDEXED BY questions_open_by_owner JOIN tasks t ON t.id = q.task_id
WHERE q.owner_id = ?1 AND q.closed_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2)";

/// One question, open or closed, with its task. Binds ?1 the question id.
const BY_ID: &str = concat!(
    "
SELECT ",
    question_columns!(),
    "
FROM questions q JOIN tasks t ON t.id = q.task_id
WHERE q.id = ?1"
);

pub(super) fn by_id(db: &D1Database, question_id: &str) -> Result<D1PreparedStatement> {
    stmt(db, BY_ID, &[s(question_id)])
}

/// One question, open or closed, with its task; `None` once it is deleted.
pub async fn question(env: &Env, question_id: &str) -> Result<Option<Question>> {
    let db = db(env)?;
    by_id(&db, question_id)?.first(None).await
}

// ---- delete ------------------------------------------------------------------------

/// Closed questions are kept this long, then deleted by the cron.
pub const KEEP_CLOSED_MS: f64 = 30.0 * 24.0 * 3600.0 * 1000.0;

/// Delivery records of questions closed before ?1.
const DELETE_OLD_DELIVERIES: &str = "
DELETE FROM deliveries WHERE question_id IN
  (SELECT id FROM questions WHERE closed_at IS NOT NULL AND closed_at < ?1)";

/// Answers of questions closed before ?1.
const DELETE_OLD_ANSWERS: &str = "
DELETE FROM answers WHERE question_id IN
  (SELECT id FROM questions WHERE closed_at IS NOT NULL AND closed_at < ?1)";

/// Questions closed before ?1.
const DELETE_OLD_QUESTIONS: &str =
    "DELETE FROM questions WHERE closed_at IS NOT NULL AND closed_at < ?1";

/// Sessions idle since before ?1 with nothing open.
const DELETE_IDLE_SESSIONS: &str = "
DELETE FROM sessions WHERE updated_at < ?1 AND NOT EXISTS
  (SELECT 1 FROM questions q WHERE q.task_id = sessions.task_id
     AND q.session = sessions.session AND q.closed_at IS NULL)";

/// Deletes questions closed more than [`KEEP_CLOSED_MS`] ago with their
/// delivery records and answers, and sessions as idle; returns how many questions went.
pub async fn delete_old(env: &Env, now: f64) -> Result<usize> {
    let db = db(env)?;
    let cutoff = [n(now - KEEP_CLOSED_MS)];
    let results = db
        .batch(vec![
            stmt(&db, DELETE_OLD_DELIVERIES, &cutoff)?,
            stmt(&db, DELETE_OLD_ANSWERS, &cutoff)?,
            stmt(&db, DELETE_OLD_QUESTIONS, &cutoff)?,
            stmt(&db, DELETE_IDLE_SESSIONS, &cutoff)?,
        ])
        .await?;
    changes(&results[2])
}

/// The request question ?1 of owner ?2 takes an answer for, with its kind.
const REQUEST: &str =
    "SELECT kind, request, sealed, open_seq FROM questions WHERE id = ?1 AND owner_id = ?2";

/// What a device opens or builds a question's card from: its kind, its
/// request (JSON) or its sealed words, and the `seq` of the open those were
/// sealed for.
#[derive(serde::Deserialize)]
pub struct HeldRequest {
    pub kind: Kind,
    pub request: Option<String>,
    pub sealed: Option<String>,
    pub open_seq: u64,
}

/// The owner's question's [`HeldRequest`], if the question is theirs.
pub async fn question_request(
    env: &Env,
    owner_id: &str,
    question_id: &str,
) -> Result<Option<HeldRequest>> {
    let db = super::sql::db(env)?;
    stmt(&db, REQUEST, &[s(question_id), s(owner_id)])?
        .first(None)
        .await
}
