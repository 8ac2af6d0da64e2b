//! What one CLI supplies to the road of an answer from afar
//! ([`crate::afar::handover`]): the answer in its own words, where its rules go,
//! how it hands an answer to its agent, and how the question closes then.
//! It stands apart from the road so that a CLI's module can offer one
//! without reaching into the road itself.

use std::path::PathBuf;

use needs_you_core::afar::AnswerBody;
use needs_you_core::classify::Takeable;
use needs_you_core::Cli;
use serde_json::Value;

use crate::error::Error;

/// One CLI's part of the road: the answer in its own words, and handing
/// those to its agent.
pub trait Taker {
    /// The answer in the form its agent takes, for the request it waits on
    /// (`None`: a reply's message, which waits on no request); `None` for
    /// one it does not take (a typed value that does not fit its form):
    /// nothing is handed on.
    fn translate(&self, answer: &AnswerBody, takeable: Option<&Takeable>) -> Option<Value>;

    /// The folder the session works in, whose settings a project's lasting
    /// rule is written into; `None` when it is not known, and a lasting
    /// choice is then not handed on.
    fn project(&self) -> Option<PathBuf>;

    /// Hands `form` to the agent: whether it took it.
    fn hand_over(&mut self, form: Value) -> Result<bool, Error>;

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
    /// Here, before it is handed over, and only while `opened` is still the
    /// session's open question (else it is not handed over): a message sent
    /// as the agent's next turn, whose own hooks must find nothing of it
    /// open, and which goes alone when the person answered in the terminal.
    First { cli: Cli, opened: u64 },
}
