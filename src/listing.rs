//! The owner's list as every reader sees it: `GET /v1/needs-you` and the
//! live list's socket build it here, so both show the same.

use needs_you_core::api;

use crate::store::ListPage;

/// `page` as `GET /v1/needs-you` answers it: each question with who asks,
/// in the words every screen shows, and its latest answer (the last in order
/// wins), or null; Show terminal offered only to a reader with that right.
pub fn needs_you(page: &ListPage, sees_screens: bool) -> api::NeedsYou {
    let questions = page
        .questions
        .iter()
        .map(|q| api::Listed {
            who: q.cli.asking(q.kind),
            answer: page
                .answers
                .iter()
                .rev()
                .find(|a| a.question_id == q.question_id)
                .map(|a| a.answer.clone()),
            question: api::Question {
                screen: q.screen && sees_screens,
                ..q.shown.clone()
            },
        })
        .collect();
    api::NeedsYou {
        questions,
        more: page.more,
        tasks: page.tasks.clone(),
    }
}
