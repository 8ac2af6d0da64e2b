//! The one road of an answer from afar on this machine, once a waiter has
//! it ([`afar::wait`] checked that it is this request's, of its form, a
//! lasting choice its dialog offers, and never taken before): put into the
//! CLI's own form, its lasting rule recorded where one is written, handed to
//! the agent, the relay told that the agent took it, the question closed.
//!
//! Every waiter takes this road: Claude Code's waiting hook
//! (`waiting_hook`), our OpenCode plugin's `__await` (`awaiting`), Codex's
//! app-server client ([`crate::codex_app`]). What differs between them is
//! one [`Taker`] each: how its CLI words an answer, where its rules go, and
//! how it hands one over. Nothing here names a CLI.

use std::path::PathBuf;

use needs_you_core::afar::{AnswerBody, Verdict};
use needs_you_core::classify::Takeable;
use needs_you_core::{Cli, CloseReason};
use serde_json::Value;

use crate::afar::Answered;
use crate::granted::{self, Places};
use crate::questions;
use crate::state::StateDir;

/// One CLI's part of the road: the answer in its own words, and handing
/// those to its agent.
pub trait Taker {
    /// The answer in the form its agent takes; `None` for one this request
    /// does not take (a typed value that does not fit its form): nothing is
    /// handed on.
    fn translate(&self, answer: &AnswerBody, takeable: &Takeable) -> Option<Value>;

    /// The folder the session works in, whose settings a project's lasting
    /// rule is written into; `None` when it is not known, and a lasting
    /// choice is then not handed on.
    fn project(&self) -> Option<PathBuf>;

    /// Hands `form` to the agent: whether it took it.
    fn hand_over(&mut self, form: Value) -> Result<bool, String>;

    /// How the question closes once the agent took the answer.
    fn closing(&self) -> Closing;
}

/// How a question closes once its answer was taken.
pub enum Closing {
    /// Here, at once, as `cli`'s answered question (of `opened`, when known:
    /// a later question of the session stays open).
    Here { cli: Cli, opened: Option<u64> },
    /// By the event the CLI sends once its dialog is gone (our plugins').
    ByItsEvent,
}

/// What became of an answer on the road.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The agent took it.
    Taken,
    /// This request does not take it in that form: the waiter may wait for
    /// another.
    DoesNotFit,
    /// A lasting choice whose rule cannot be recorded here, so that it
    /// could never be taken back: left to the terminal.
    NotRecorded(String),
    /// It could not be handed to the agent: why.
    NotHanded(String),
    /// Handed, but the agent did not say it took it (a plugin that saw its
    /// dialog answered in the terminal first).
    NotTaken,
}

/// Takes `answered` for `takeable` down the road to the agent, through
/// `taker`. `task` is the relay's key of the task, under which a written
/// rule is recorded. The relay hears "took" only on [`Outcome::Taken`]; on
/// anything else it is let go, and the relay reports that the agent did not
/// take it.
pub fn deliver(
    dir: &StateDir,
    task: &str,
    session: &str,
    takeable: &Takeable,
    answered: Answered,
    taker: &mut dyn Taker,
) -> Outcome {
    let Some(form) = taker.translate(&answered.answer, takeable) else {
        return Outcome::DoesNotFit;
    };
    // A rule the CLI is about to write into a settings or rules file is
    // recorded first, so that it can be taken back from afar; one that
    // cannot be is not handed on (the dialog stays the terminal's).
    if let AnswerBody::Decision {
        decision: Verdict::Lasting(id),
        ..
    } = &answered.answer
    {
        let Some(lasting) = needs_you_core::lasting::find(&takeable.request, id) else {
            return Outcome::DoesNotFit;
        };
        let Some(project) = taker.project() else {
            return Outcome::NotRecorded("the session's project folder is not known".into());
        };
        let places = Places::here(&project);
        let recorded = granted::record(
            dir.path(),
            task,
            &answered.answer_id,
            &lasting.suggestion,
            &places,
        );
        if let Err(e) = recorded {
            return Outcome::NotRecorded(e);
        }
    }
    match taker.hand_over(form) {
        Ok(true) => {}
        Ok(false) => return Outcome::NotTaken,
        Err(e) => return Outcome::NotHanded(e),
    }
    answered.took();
    if let Closing::Here { cli, opened } = taker.closing() {
        if let Err(e) = questions::close(dir, cli, session, CloseReason::Answered, opened) {
            dir.log(&format!("the answered question could not close: {e}"));
        }
    }
    Outcome::Taken
}
