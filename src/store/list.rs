//! What the page shows: the owner's revision, open questions, live tasks
//! (with the rules granted on them) and the answers on their way, read in one batch so that they match.

use worker::{Env, Result};

use needs_you_core::api;

use super::answers::AnswerOf;
use super::sql::{db, n, s, stmt};
use super::{accounts, answers, questions, revision};
use crate::limits;
use crate::question::Question;

/// What the page shows, read together so that it matches its revision.
pub struct ListPage {
    pub revision: i64,
    pub questions: Vec<Question>,
    pub tasks: Vec<api::Task>,
    /// The latest answer of each open question that has one.
    pub answers: Vec<AnswerOf>,
    /// Open questions left out of `questions` ([`limits::LIST_QUESTIONS`]).
    pub more: u32,
}

/// The owner's list revision, open questions and live tasks, in one batch.
pub async fn list_page(env: &Env, owner_id: &str, now: f64) -> Result<ListPage> {
    let db = db(env)?;
    let owner_now = [s(owner_id), n(now)];
    let results = db
        .batch(vec![
            stmt(&db, revision::REVISION, &[s(owner_id)])?,
            stmt(
                &db,
                questions::NEEDS_YOU,
                &[s(owner_id), n(now), n(f64::from(limits::LIST_QUESTIONS))],
            )?,
            stmt(&db, accounts::LIST_TASKS, &owner_now)?,
            stmt(&db, answers::ANSWERS_OF_OPEN, &[s(owner_id)])?,
            stmt(&db, questions::NEEDS_YOU_COUNT, &owner_now)?,
            stmt(
                &db,
                super::rules::RULES_OF_OWNER,
                &[s(owner_id), n(now), n(1.0)],
            )?,
        ])
        .await?;
    #[derive(serde::Deserialize)]
    struct Count {
        n: u32,
    }
    let questions: Vec<Question> = results[1].results()?;
    let open = results[4].results::<Count>()?.first().map_or(0, |c| c.n);
    let mut tasks: Vec<api::Task> = results[2]
        .results::<api::Task>()?
        .into_iter()
        .map(accounts::named)
        .collect();
    super::rules::on_their_tasks(&mut tasks, results[5].results()?);
    let revision = results[0]
        .results::<revision::RevisionRow>()?
        .first()
        .map_or(0, |r| r.revision);
    Ok(ListPage {
        revision,
        more: open.saturating_sub(questions.len() as u32),
        questions,
        tasks,
        answers: results[3].results()?,
    })
}
