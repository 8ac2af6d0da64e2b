//! The owner's list as every reader sees it: `GET /v1/needs-you` and the
//! live list's socket build it here, so both show the same; and the
//! history's pages, `GET /v1/history`.

use needs_you_core::api;

use crate::store::{HistoryPage, ListPage};

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

/// One page of the history as `GET /v1/history` answers it: each question
/// with who asked, every answer it had and the rules they granted; `next`
/// as the route makes it from the page's last question.
pub fn history(page: HistoryPage, next: Option<String>) -> api::History {
    let questions = page
        .questions
        .into_iter()
        .map(|q| api::Past {
            who: q.cli.asking(q.kind),
            answers: (page.answers.iter())
                .filter(|a| a.question_id == q.question_id)
                .map(|a| a.answer.clone())
                .collect(),
            rules: (page.rules.iter())
                .filter(|r| r.question_id == q.question_id)
                .cloned()
                .collect(),
            // Show terminal belongs to the list of what is open now.
            question: api::Question {
                screen: false,
                ..q.shown
            },
        })
        .collect();
    api::History { questions, next }
}
