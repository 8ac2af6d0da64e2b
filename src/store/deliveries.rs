//! What a notifier's alarm reads and writes: its question with the owner's
//! channels and every past delivery attempt, read in one batch, and the
//! record of each new attempt.

use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{Env, Result};

use super::channels::ChannelRow;
use super::questions;
use super::sql::{db, n, opt_n, s, stmt};
use crate::delivery::{Attempts, Event};
use crate::question::Question;
use needs_you_core::api;

/// Every channel of the owner named by `$owner` (an SQL expression), with a
/// name for a person: the ones the owner set, and each live device's push
/// subscription, named `webpush:<device id>`. What hears of a question is
/// decided here only; the two statements below differ in how they find the
/// owner.
macro_rules! channels_of {
    ($owner:literal) => {
        concat!(
            "
SELECT kind, config, kind AS name FROM channels WHERE owner_id = ",
            $owner,
            "
UNION ALL
SELECT 'webpush:' || id AS kind, push AS config, name FROM devices
WHERE owner_id = ",
            $owner,
            " AND revoked_at IS NULL AND push IS NOT NULL
ORDER BY kind"
        )
    };
}

/// The channels of the question's owner. Binds ?1 the question id.
const CHANNELS_OF_QUESTION: &str = channels_of!("(SELECT owner_id FROM questions WHERE id = ?1)");

/// The owner's channels. Binds ?1 the owner id.
const CHANNELS_OF_OWNER: &str = channels_of!("?1");

#[derive(Deserialize)]
pub struct NamedChannel {
    pub kind: String,
    pub config: String,
    pub name: String,
}

/// Every channel that would hear of the owner's next question.
pub async fn channels_of_owner(env: &Env, owner_id: &str) -> Result<Vec<NamedChannel>> {
    let db = db(env)?;
    stmt(&db, CHANNELS_OF_OWNER, &[s(owner_id)])?
        .all()
        .await?
        .results()
}

/// Past attempts per channel and event. Binds ?1 the question id.
const ATTEMPTS: &str = "
SELECT channel, event, COUNT(*) AS tried, MAX(ok) AS ok, MAX(at) AS last_at
FROM deliveries WHERE question_id = ?1 GROUP BY channel, event";

/// Records one attempt. Binds ?1 question id, ?2 channel, ?3 event,
/// ?4 attempt number, ?5 now, ?6 ok (0 or 1), ?7 HTTP status, ?8 error.
const RECORD_ATTEMPT: &str = "
INSERT INTO deliveries (question_id, channel, event, attempt, at, ok, status, error)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

/// Keeps the channel's last outcome on its row. Binds ?1 question id,
/// ?2 channel, ?3 now, ?4 ok (0 or 1), ?5 error.
const RECORD_OUTCOME: &str = "
UPDATE channels SET
  last_success_at = CASE WHEN ?4 = 1 THEN ?3 ELSE last_success_at END,
  last_failure_at = CASE WHEN ?4 = 1 THEN last_failure_at ELSE ?3 END,
  last_error = CASE WHEN ?4 = 1 THEN last_error ELSE ?5 END
WHERE owner_id = (SELECT owner_id FROM questions WHERE id = ?1) AND kind = ?2";

/// A question's attempts, oldest first, if the question is the owner's.
/// Binds ?1 the question id, ?2 the owner id.
const LOG_OF_QUESTION: &str = "
SELECT d.channel, d.event, d.attempt, d.at, d.ok, d.status, d.error
FROM deliveries d JOIN questions q ON q.id = d.question_id
WHERE d.question_id = ?1 AND q.owner_id = ?2
ORDER BY d.id";

/// Whether the question is the owner's. Binds ?1 the question id, ?2 the owner id.
const QUESTION_OF_OWNER: &str = "SELECT id FROM questions WHERE id = ?1 AND owner_id = ?2";

/// One attempt, as the delivery log shows it.
#[derive(Deserialize, Serialize)]
pub struct LoggedAttempt {
    pub channel: String,
    pub event: String,
    pub attempt: i64,
    pub at: i64,
    pub ok: bool,
    pub status: Option<i64>,
    pub error: Option<String>,
}

/// The delivery log of one of the owner's questions; `None` when the
/// question is not the owner's (or does not exist).
pub async fn delivery_log(
    env: &Env,
    owner_id: &str,
    question_id: &str,
) -> Result<Option<Vec<LoggedAttempt>>> {
    let db = db(env)?;
    let args = [s(question_id), s(owner_id)];
    let results = db
        .batch(vec![
            stmt(&db, QUESTION_OF_OWNER, &args)?,
            stmt(&db, LOG_OF_QUESTION, &args)?,
        ])
        .await?;
    if results[0].results::<serde_json::Value>()?.is_empty() {
        return Ok(None);
    }
    #[derive(Deserialize)]
    struct Row {
        channel: String,
        event: String,
        attempt: i64,
        at: i64,
        ok: i64,
        status: Option<i64>,
        error: Option<String>,
    }
    Ok(Some(
        results[1]
            .results::<Row>()?
            .into_iter()
            .map(|r| LoggedAttempt {
                channel: r.channel,
                event: r.event,
                attempt: r.attempt,
                at: r.at,
                ok: r.ok != 0,
                status: r.status,
                error: r.error,
            })
            .collect(),
    ))
}

#[derive(Deserialize)]
struct AttemptRow {
    channel: String,
    event: Event,
    tried: u32,
    ok: i64,
    last_at: f64,
}

/// Everything the alarm needs to decide, read together.
pub struct AlarmRead {
    pub question: Question,
    pub channels: Vec<ChannelRow>,
    pub attempts: Vec<Attempts>,
    /// Until when some live device of the owner has its page looking, and
    /// which (its name).
    pub looking_until: Option<f64>,
    pub looking_device: Option<String>,
}

/// The latest presence of the owner's live devices that may answer: a
/// device that can only read (an agent machine's login) never quiets a
/// ring. Binds ?1 the question id, ?2 the bit of the `answer` right.
const LOOKING_UNTIL: &str = "
SELECT looking_until AS until, name FROM devices
WHERE owner_id = (SELECT owner_id FROM questions WHERE id = ?1) AND revoked_at IS NULL
  AND (rights & ?2) != 0 AND looking_until IS NOT NULL
ORDER BY looking_until DESC LIMIT 1";

/// `None` when the question is gone.
pub async fn alarm_read(env: &Env, question_id: &str) -> Result<Option<AlarmRead>> {
    let db = db(env)?;
    let id = [s(question_id)];
    let results = db
        .batch(vec![
            questions::by_id(&db, question_id)?,
            stmt(&db, CHANNELS_OF_QUESTION, &id)?,
            stmt(&db, ATTEMPTS, &id)?,
            stmt(
                &db,
                LOOKING_UNTIL,
                &[
                    s(question_id),
                    n(f64::from(
                        api::Rights::from(vec![api::Right::Answer]).bits(),
                    )),
                ],
            )?,
        ])
        .await?;
    let Some(question) = results[0].results::<Question>()?.into_iter().next() else {
        return Ok(None);
    };
    let attempts = results[2]
        .results::<AttemptRow>()?
        .into_iter()
        .map(|r| Attempts {
            channel: r.channel,
            event: r.event,
            tried: r.tried,
            ok: r.ok != 0,
            last_at: r.last_at,
        })
        .collect();
    #[derive(Deserialize)]
    struct Until {
        until: Option<f64>,
        name: Option<String>,
    }
    let looking = results[3].results::<Until>()?.into_iter().next();
    let (looking_until, looking_device) = looking.map_or((None, None), |u| (u.until, u.name));
    Ok(Some(AlarmRead {
        question,
        channels: results[1].results()?,
        attempts,
        looking_until,
        looking_device,
    }))
}

pub struct Attempt<'a> {
    pub question_id: &'a str,
    pub channel: &'a str,
    pub event: Event,
    pub attempt: u32,
    pub ok: bool,
    pub status: Option<u16>,
    pub error: Option<&'a str>,
    /// The device whose presence made it quiet, if one did.
    pub quieted_by: Option<&'a str>,
}

pub async fn record_attempt(env: &Env, a: &Attempt<'_>, now: f64) -> Result<()> {
    let db = db(env)?;
    let args = [
        s(a.question_id),
        s(a.channel),
        s(a.event.as_str()),
        n(f64::from(a.attempt)),
        n(now),
        n(if a.ok { 1.0 } else { 0.0 }),
        opt_n(a.status.map(f64::from)),
        a.error.map_or(JsValue::NULL, s),
    ];
    let outcome = [
        args[0].clone(),
        args[1].clone(),
        args[4].clone(),
        args[5].clone(),
        args[7].clone(),
    ];
    let mut batch = vec![
        stmt(&db, RECORD_ATTEMPT, &args)?,
        stmt(&db, RECORD_OUTCOME, &outcome)?,
    ];
    // A delivered open marks the question notified in the same transaction:
    // a close is then always sent to a channel that had the open.
    if a.ok && a.event == Event::Open {
        // The card says when it rang, and whose page made it quiet.
        batch.push(stmt(
            &db,
            super::revision::BUMP_REVISION_IF_NOT_NOTIFIED,
            &[s(a.question_id)],
        )?);
        batch.push(stmt(
            &db,
            questions::MARK_NOTIFIED,
            &[
                s(a.question_id),
                n(now),
                a.quieted_by.map_or(JsValue::NULL, s),
            ],
        )?);
    }
    db.batch(batch).await?;
    Ok(())
}
