//! The pure logic that the needs-you reporter, command line and Worker share,
//! and every format that crosses from one machine to another.
//!
//! Nothing here does I/O. The reporter and the command line build it
//! natively, the Worker builds it to wasm32, and all get the same answers:
//!
//! * [`kinds`]: the agent, the kind of question, why it closed, an option.
//! * [`agent`]: what the project knows of each CLI, one description each.
//! * [`report`]: the report sent to `POST /v1/reports`, and its validation.
//! * [`question`]: "does this reply end with a question", and the tail of a reply
//!   that is worth showing on a phone.
//! * [`mod@classify`]: which hook event of which CLI opens a question, closes it, or
//!   means nothing, following the hook table in `docs/hooks.md`.
//! * [`answer`]: what may be typed into an agent's prompt from afar.
//! * [`afar`]: answering dialogs and permissions from afar: the forms, the
//!   digest that binds an answer to its request, and the one admission rule.
//! * [`refusal`]: why an answer from afar is refused, each with its stable code.
//! * [`lasting`]: a permission's lasting choices ("don't ask again"), as
//!   its CLI suggests them, and the id that binds each.
//! * [`request`]: the request an answer from afar covers, as the CLI gave it;
//!   its card is `classify::card`'s.
//! * [`text`]: the control and invisible characters that no screen shows.
//! * [`api`]: the API's views that the Worker writes and the command line
//!   reads: the list, a question, a task, an answer.
//! * [`history`]: what a search of the history reads, and whether it finds
//!   a past question, for the command line and the page alike.
//! * [`live`]: the live list: the messages on the socket a reader of the
//!   list holds, and what changed between two lists.
//! * [`relay_messages`]: the messages between the Worker and the relay on the agent's
//!   machine, and the socket's close codes.
//! * [`screen`]: a terminal's screen for Show terminal: read from tmux,
//!   bounded, cleaned, drawn.
//! * [`signed`]: the statement a device signs for each answer, and the
//!   envelope it travels in, checked on the agent's machine.
//! * [`sealed`]: the content key's wrapping to each device and the sealing
//!   of words under it: their text forms and associated data.
//! * [`words`]: what of a question is sealed on the agent's machine, and
//!   put back on the device that opens it.
//! * [`url`]: which server addresses a client may talk to.
//! * [`pairing_code`]: a pairing code as people type it, read forgivingly.
//! * [`query`]: a URL's query, written and read by hand.
//! * `wire`: the macro that makes an enum travel as a fixed set of strings.

#[macro_use]
mod wire;

pub mod afar;
pub mod agent;
pub mod answer;
pub mod api;
pub mod classify;
pub mod history;
pub mod kinds;
pub mod lasting;
pub mod live;
pub mod pairing_code;
pub mod query;
pub mod question;
pub mod refusal;
pub mod relay_messages;
pub mod report;
pub mod request;
pub mod screen;
pub mod sealed;
pub mod signed;
pub mod text;
pub mod url;
pub mod words;

pub use classify::{classify, Classified, Decision};
pub use report::{
    Cli, CloseReason, Kind, QuestionOption, Report, ReportError, Terminal, TerminalKind,
};
pub use text::{truncate_bytes, truncate_chars};

/// A file of `tests/fixtures` (screens and payloads of the real CLIs), for
/// the unit tests that read one.
#[cfg(test)]
pub(crate) fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}
