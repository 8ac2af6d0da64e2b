//! Answers from afar: a reply's text, a permission's decision, a dialog's
//! choices, queued by the owner or a device (the page, the command line),
//! handed to the relay on the agent's machine, and marked as it reports
//! back. Each records who answered, and the request it answers. Every statement that changes one also raises the owner's
//! list revision, so the page shows the answer's state as it moves.

use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{Env, Result};

use needs_you_core::afar::AnswerBody;
use needs_you_core::signed::Envelope;
use needs_you_core::{api, relay_messages};

use super::sql::{db, n, s, stmt};

/// Whether the question has an answer on its way. Binds ?1 the question id.
const PENDING: &str = "
SELECT EXISTS (SELECT 1 FROM answers a WHERE a.question_id = q.id AND a.state IN ('queued', 'delivered')) AS pending
FROM questions q WHERE q.id = ?1";

/// An answer still `queued` and never sent (its relay is away) gives way to a newer one, under the same conditions as [`QUEUE`],
/// so that a refused new answer changes nothing. One `delivered` is the
/// agent's machine's already, and is not replaced. Binds ?1 the question id,
/// ?2 the owner id, ?3 now, ?4 the digest the new answer is for (or null).
const REPLACE_QUEUED: &str = "
UPDATE answers SET state = 'failed', reason = 'replaced by a newer answer', reason_code = 'replaced', updated_at = ?3
WHERE question_id = ?1 AND owner_id = ?2 AND state = 'queued' AND sent_at IS NULL
  AND EXISTS (
    SELECT 1 FROM questions q JOIN tasks t ON t.id = q.task_id
    WHERE q.id = ?1 AND q.owner_id = ?2 AND q.closed_at IS NULL AND (?4 IS NULL OR q.digest = ?4)
      AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?3))";

/// Queues the answer if the owner's question is still open, of a live task,
/// still the request the answer was made for (its digest, for a decision or
/// choices), with no answer on its way, bound to the question's open as it
/// is now (its `open_seq`). Binds ?1 the question id, ?2 the
/// owner id, ?3 now, ?4 the answer id, ?5 what a person reads of it, ?6 its
/// form, ?7 its body (JSON), ?8 the device that sent it (or null), ?9 the
/// digest it answers (or null, for a text), ?10 its signed statement (JSON,
/// or null), ?11 its sealed words (or null).
const QUEUE: &str = "
INSERT INTO answers (id, question_id, task_id, owner_id, text, state, created_at, updated_at, form, body, device_id, digest, open_seq, signed, sealed)
SELECT ?4, q.id, q.task_id, q.owner_id, ?5, 'queued', ?3, ?3, ?6, ?7, ?8, ?9, q.open_seq, ?10, ?11
FROM questions q JOIN tasks t ON t.id = q.task_id
WHERE q.id = ?1 AND q.owner_id = ?2 AND q.closed_at IS NULL AND (?9 IS NULL OR q.digest = ?9)
  AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?3)
  AND NOT EXISTS (SELECT 1 FROM answers a WHERE a.question_id = q.id AND a.state IN ('queued', 'delivered'))
RETURNING id, task_id";

/// An answer to queue.
pub struct NewAnswer<'a> {
    pub id: &'a str,
    pub question_id: &'a str,
    pub owner_id: &'a str,
    pub device_id: Option<&'a str>,
    pub body: &'a AnswerBody,
    pub digest: Option<&'a str>,
    pub signed: Option<&'a Envelope>,
    /// Its words, sealed by the device that made it.
    pub sealed: Option<&'a str>,
}

/// What queueing an answer did.
pub enum Queued {
    /// Queued for the task's relay.
    Yes { task_id: String },
    /// Another answer is on its way.
    Pending,
    /// The question closed, its task went, or it is no longer that request.
    Gone,
}

pub async fn queue_answer(env: &Env, a: &NewAnswer<'_>, now: f64) -> Result<Queued> {
    let db = db(env)?;
    let body =
        serde_json::to_string(a.body).map_err(|e| worker::Error::RustError(e.to_string()))?;
    let signed = a
        .signed
        .map(|e| serde_json::to_string(e).unwrap_or_default());
    let args = [
        s(a.question_id),
        s(a.owner_id),
        n(now),
        s(a.id),
        s(&a.body.summary()),
        s(a.body.form().as_str()),
        s(&body),
        a.device_id.map_or(JsValue::NULL, s),
        a.digest.map_or(JsValue::NULL, s),
        signed.as_deref().map_or(JsValue::NULL, s),
        a.sealed.map_or(JsValue::NULL, s),
    ];
    let results = db
        .batch(vec![
            stmt(
                &db,
                REPLACE_QUEUED,
                &[
                    s(a.question_id),
                    s(a.owner_id),
                    n(now),
                    a.digest.map_or(JsValue::NULL, s),
                ],
            )?,
            stmt(&db, PENDING, &[s(a.question_id)])?,
            stmt(&db, QUEUE, &args)?,
            stmt(
                &db,
                super::revision::BUMP_REVISION_IF_ANSWER,
                &[s(a.id), s(a.owner_id)],
            )?,
        ])
        .await?;
    #[derive(Deserialize)]
    struct Row {
        task_id: String,
    }
    if let Some(row) = results[2].results::<Row>()?.into_iter().next() {
        return Ok(Queued::Yes {
            task_id: row.task_id,
        });
    }
    #[derive(Deserialize)]
    struct Pending {
        pending: i64,
    }
    let pending = results[1]
        .results::<Pending>()?
        .first()
        .is_some_and(|p| p.pending != 0);
    Ok(if pending {
        Queued::Pending
    } else {
        Queued::Gone
    })
}

/// Answers whose question closed and that are still on its way fail: a
/// question's close fails them already (`migrations/0012_answers_spent_once.sql`);
/// this catches rows from before that rule. Never sent again after it. Binds ?1 the task id, ?2 now.
const FAIL_CLOSED: &str = "
UPDATE answers SET state = 'failed', reason = 'the question closed before the agent took the answer',
       reason_code = 'closed', updated_at = ?2
WHERE task_id = ?1 AND state IN ('queued', 'delivered')
  AND question_id IN (SELECT id FROM questions WHERE task_id = ?1 AND closed_at IS NOT NULL)";

/// The list revision's raise after [`FAIL_CLOSED`], only if it failed an
/// answer now: a relay says hello on every connection, mostly with nothing
/// to settle, and every open page would read its whole list again. Binds ?1
/// the task id, ?2 now.
const BUMP_REVISION_IF_FAILED_NOW: &str = "
UPDATE owners SET revision = revision + 1
WHERE id = (SELECT owner_id FROM tasks WHERE id = ?1)
  AND EXISTS (SELECT 1 FROM answers WHERE task_id = ?1 AND state = 'failed' AND updated_at = ?2)";

/// What the relay is handed of an answer ([`OnItsWay`]), by both queries
/// that pick answers for it.
macro_rules! on_its_way {
    () => {
        "
SELECT a.id AS answer_id, a.question_id, q.session, coalesce(a.open_seq, q.open_seq) AS open_seq,
       coalesce((SELECT s.last_seq FROM sessions s WHERE s.task_id = a.task_id AND s.session = q.session), 0) AS session_seq,
       a.text, a.body, a.digest, a.signed, a.sealed,
       (SELECT o.device_list FROM owners o WHERE o.id = a.owner_id) AS devices
FROM answers a JOIN questions q ON q.id = a.question_id"
    };
}

/// The task's answers on their way, oldest first: those queued and those
/// the relay had, of questions still open, each with the `seq` of its
/// question's open when the answer was made, which the agent's machine
/// checks is its own open. Binds ?1 the task id.
const ON_THEIR_WAY: &str = concat!(
    on_its_way!(),
    "
WHERE a.task_id = ?1 AND a.state IN ('queued', 'delivered') AND q.closed_at IS NULL
ORDER BY a.created_at"
);

/// Marks the task's queued answers sent (`sent_at`), in the statement that
/// picks them for its connected relay, so that taking one back or replacing
/// it (which need `sent_at IS NULL`) either happens before it is sent, and
/// it is not, or is refused: the agent's machine may act on a sent answer
/// before it says so. Binds ?1 the task id, ?2 now, ?3 one answer's id (or
/// null for all of them).
const MARK_SENT: &str = "
UPDATE answers SET sent_at = ?2
WHERE task_id = ?1 AND state = 'queued' AND sent_at IS NULL AND (?3 IS NULL OR id = ?3)";

/// An answer on its way, as D1 keeps it: its body as JSON (none in the
/// rows of answers made before there were other forms than a text).
#[derive(Deserialize)]
struct OnItsWay {
    answer_id: String,
    question_id: String,
    session: String,
    open_seq: u64,
    session_seq: u64,
    text: String,
    body: Option<String>,
    digest: Option<String>,
    signed: Option<String>,
    sealed: Option<String>,
    devices: Option<String>,
}

impl From<OnItsWay> for relay_messages::Answer {
    fn from(r: OnItsWay) -> relay_messages::Answer {
        let body = r
            .body
            .and_then(|b| serde_json::from_str(&b).ok())
            .unwrap_or(AnswerBody::Text { text: r.text });
        relay_messages::Answer {
            answer_id: r.answer_id,
            question_id: r.question_id,
            session: r.session,
            open_seq: r.open_seq,
            session_seq: r.session_seq,
            body,
            digest: r.digest,
            sealed: r.sealed,
            signed: r.signed.and_then(|e| serde_json::from_str(&e).ok()),
            devices: r.devices.and_then(|e| serde_json::from_str(&e).ok()),
        }
    }
}

/// Every answer of the task for its relay, which just connected, marked
/// sent ([`MARK_SENT`]).
pub async fn answers_on_their_way(
    env: &Env,
    task_id: &str,
    now: f64,
) -> Result<Vec<relay_messages::Answer>> {
    let db = db(env)?;
    let results = db
        .batch(vec![
            stmt(&db, FAIL_CLOSED, &[s(task_id), n(now)])?,
            stmt(&db, BUMP_REVISION_IF_FAILED_NOW, &[s(task_id), n(now)])?,
            stmt(&db, MARK_SENT, &[s(task_id), n(now), JsValue::NULL])?,
            stmt(&db, ON_THEIR_WAY, &[s(task_id)])?,
        ])
        .await?;
    Ok(results[3]
        .results::<OnItsWay>()?
        .into_iter()
        .map(relay_messages::Answer::from)
        .collect())
}

/// One answer for the relay, if it is still on its way. Binds ?1 the answer id.
const ONE_ON_ITS_WAY: &str = concat!(
    on_its_way!(),
    "
WHERE a.id = ?1 AND a.state IN ('queued', 'delivered') AND q.closed_at IS NULL"
);

/// The answer for the task's connected relay, marked sent ([`MARK_SENT`]),
/// if it is still on its way.
pub async fn claim_answer(
    env: &Env,
    task_id: &str,
    answer_id: &str,
    now: f64,
) -> Result<Option<relay_messages::Answer>> {
    let db = db(env)?;
    let results = db
        .batch(vec![
            stmt(&db, MARK_SENT, &[s(task_id), n(now), s(answer_id)])?,
            stmt(&db, ONE_ON_ITS_WAY, &[s(answer_id)])?,
        ])
        .await?;
    Ok(results[1]
        .results::<OnItsWay>()?
        .into_iter()
        .next()
        .map(relay_messages::Answer::from))
}

/// Moves the task's answer to `state` from one that may precede it: from
/// `queued`, or from `delivered` to where it ends; and, when the agent's
/// machine says it typed or took an answer it had, which the Worker failed
/// meanwhile (its question closed, which its taking may have caused; its
/// device was revoked or its owner token replaced after it was sent), to
/// that: the record says what happened. An answer taken that chose a
/// lasting choice records its rule ([`super::rules::RECORD`]). Binds ?1 the
/// answer id, ?2 the task id, ?3 the state, ?4 the reason, ?5 now, ?6 the
/// reason's code.
pub(super) const MARK: &str = "
UPDATE answers SET state = ?3, reason = ?4, reason_code = ?6, updated_at = ?5
WHERE id = ?1 AND task_id = ?2
  AND (state = 'queued' OR (state = 'delivered' AND ?3 IN ('typed', 'taken', 'failed'))
       OR (state = 'failed' AND reason_code IN ('closed', 'revoked', 'rotated') AND sent_at IS NOT NULL
           AND ?3 IN ('typed', 'taken')))";

pub async fn mark_answer(
    env: &Env,
    task_id: &str,
    answer_id: &str,
    progress: api::AnswerState,
    reason: Option<(&str, Option<&str>)>,
    now: f64,
) -> Result<()> {
    let db = db(env)?;
    let args = [
        s(answer_id),
        s(task_id),
        s(progress.as_str()),
        reason.map_or(JsValue::NULL, |(r, _)| s(r)),
        n(now),
        reason.and_then(|(_, c)| c).map_or(JsValue::NULL, s),
    ];
    let rule_id = crate::ids::new_id("rul_");
    let mut record = args.to_vec();
    record.push(s(&rule_id));
    db.batch(vec![
        stmt(&db, MARK, &args)?,
        stmt(&db, super::rules::RECORD, &record)?,
        stmt(&db, super::revision::BUMP_REVISION_IF_MARKED, &args[..5])?,
    ])
    .await?;
    Ok(())
}

/// The latest answer of each of the owner's open questions. Binds ?1 the owner id.
pub(super) const ANSWERS_OF_OPEN: &str = "
SELECT a.question_id, a.id AS answer_id, a.state, a.reason, a.reason_code, a.text, a.updated_at, a.form, a.sealed,
       CASE WHEN a.device_id IS NULL THEN 'the owner' ELSE (SELECT name FROM devices WHERE id = a.device_id) END AS answered_by
FROM answers a JOIN questions q ON q.id = a.question_id
WHERE a.owner_id = ?1 AND q.closed_at IS NULL
ORDER BY a.created_at";

/// An answer as the list shows it, and the question it answers.
#[derive(Debug, Clone, Deserialize)]
pub struct AnswerOf {
    pub question_id: String,
    #[serde(flatten)]
    pub answer: api::Answer,
}

/// One of the owner's answers, with its state. Binds ?1 the answer id, ?2
/// the owner id.
const ANSWER_OF_OWNER: &str = "
SELECT id AS answer_id, question_id, state, reason, reason_code, text, created_at, updated_at, form, sealed,
       CASE WHEN device_id IS NULL THEN 'the owner' ELSE (SELECT name FROM devices WHERE id = answers.device_id) END AS answered_by
FROM answers WHERE id = ?1 AND owner_id = ?2";

/// Takes back the owner's answer ?1 if it is still `queued` and was never
/// sent ([`MARK_SENT`]): the agent's
/// machine never had it. Binds ?1 the answer id, ?2 the owner id, ?3 now.
const TAKE_BACK: &str = "
UPDATE answers SET state = 'failed', reason = 'taken back', reason_code = 'taken_back', updated_at = ?3
WHERE id = ?1 AND owner_id = ?2 AND state = 'queued' AND sent_at IS NULL
RETURNING id";

/// What taking an answer back did.
pub enum TakenBack {
    Yes,
    /// Not `queued` any more (delivered, typed, taken, failed), or not the owner's.
    No,
}

pub async fn take_back(env: &Env, owner_id: &str, answer_id: &str, now: f64) -> Result<TakenBack> {
    let db = db(env)?;
    let results = db
        .batch(vec![
            stmt(&db, TAKE_BACK, &[s(answer_id), s(owner_id), n(now)])?,
            stmt(
                &db,
                super::revision::BUMP_REVISION_IF_TAKEN_BACK,
                &[s(answer_id), s(owner_id), n(now)],
            )?,
        ])
        .await?;
    #[derive(Deserialize)]
    struct Row {
        #[allow(dead_code)]
        id: String,
    }
    Ok(if results[0].results::<Row>()?.is_empty() {
        TakenBack::No
    } else {
        TakenBack::Yes
    })
}

pub async fn answer_of_owner(
    env: &Env,
    owner_id: &str,
    answer_id: &str,
) -> Result<Option<api::AnswerStatus>> {
    let db = db(env)?;
    stmt(&db, ANSWER_OF_OWNER, &[s(answer_id), s(owner_id)])?
        .first(None)
        .await
}
