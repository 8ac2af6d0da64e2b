//! The owner's history: every question still kept (open, and closed for
//! 30 days), newest first, one page at a time, with every answer it had and
//! the rules they granted, read in one batch so that they match.

use worker::{Env, Result};

use needs_you_core::api;

use super::answers::AnswerOf;
use super::sql::{db, n, s, stmt};
use crate::question::Question;

/// Where a page starts: after the question opened at `opened_at` with the
/// id `question_id` (questions opened in the same millisecond are ordered
/// by id).
#[derive(Debug, Clone, PartialEq)]
pub struct Before {
    pub opened_at: f64,
    pub question_id: String,
}

impl Before {
    /// Before every question.
    pub fn start() -> Before {
        Before {
            opened_at: f64::from(u32::MAX) * 1e6,
            question_id: String::new(),
        }
    }
}

/// One page of questions, the subquery the answers and rules also read.
/// Binds ?1 the owner id, ?3 before's time, ?4 before's id, ?5 how many.
macro_rules! page_of {
    () => {
        "SELECT q.id FROM questions q
 WHERE q.owner_id = ?1 AND (q.opened_at < ?3 OR (q.opened_at = ?3 AND q.id < ?4))
 ORDER BY q.opened_at DESC, q.id DESC LIMIT ?5"
    };
}

/// The page's questions, newest first. Binds as [`page_of`].
const QUESTIONS: &str = concat!(
    "SELECT ",
    question_columns!(),
    "
FROM questions q JOIN tasks t ON t.id = q.task_id
WHERE q.id IN (",
    page_of!(),
    ")
ORDER BY q.opened_at DESC, q.id DESC"
);

/// Every answer to the page's questions, oldest first.
const ANSWERS: &str = concat!(
    "
SELECT a.question_id, a.id AS answer_id, a.state, a.reason, a.reason_code, a.text, a.created_at,
       a.updated_at, a.form, a.sealed,
       CASE WHEN a.device_id IS NULL THEN 'the owner' ELSE coalesce((SELECT name FROM devices WHERE id = a.device_id), 'a removed device') END AS answered_by
FROM answers a
WHERE a.owner_id = ?1 AND a.question_id IN (",
    page_of!(),
    ")
ORDER BY a.created_at"
);

/// The rules the page's questions' answers granted, oldest first. Binds ?2
/// now besides.
const RULES: &str = concat!(
    rule_columns!(),
    "
WHERE r.owner_id = ?1 AND r.question_id IN (",
    page_of!(),
    ")
ORDER BY r.granted_at"
);

/// One page of the history, read together.
pub struct HistoryPage {
    pub questions: Vec<Question>,
    pub answers: Vec<AnswerOf>,
    pub rules: Vec<api::Rule>,
}

/// The owner's `limit` questions opened before `before`, newest first, with
/// their answers and rules.
pub async fn history(
    env: &Env,
    owner_id: &str,
    before: &Before,
    limit: u32,
    now: f64,
) -> Result<HistoryPage> {
    let db = db(env)?;
    let binds = [
        s(owner_id),
        n(now),
        n(before.opened_at),
        s(&before.question_id),
        n(f64::from(limit)),
    ];
    let results = db
        .batch(vec![
            stmt(&db, QUESTIONS, &binds)?,
            stmt(&db, ANSWERS, &binds)?,
            stmt(&db, RULES, &binds)?,
        ])
        .await?;
    Ok(HistoryPage {
        questions: results[0].results()?,
        answers: results[1].results()?,
        rules: results[2]
            .results::<api::Rule>()?
            .into_iter()
            .map(api::Rule::worded)
            .collect(),
    })
}
