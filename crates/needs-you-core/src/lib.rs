//! The pure logic that the needs-you reporter and Worker share.
//!
//! Nothing here does I/O. The reporter builds it natively, the Worker builds it to
//! wasm32, and both get the same answers:
//!
//! * [`report`]: the report sent to `POST /v1/reports`, and its validation.
//! * [`question`]: "does this reply end with a question", and the tail of a reply
//!   that is worth showing on a phone.
//! * [`classify`]: which hook event of which CLI opens a question, closes it, or
//!   means nothing, following the hook table in `docs/hooks.md`.
//! * [`answer`]: what may be typed into an agent's prompt from afar.
//! * [`text`]: the control and invisible characters that no screen shows.

pub mod answer;
pub mod classify;
pub mod question;
pub mod report;
pub mod text;

pub use classify::{classify, Classified, Decision};
pub use report::{
    truncate_bytes, truncate_chars, Cli, CloseReason, Kind, QuestionOption, Report, ReportError,
    Terminal,
};
