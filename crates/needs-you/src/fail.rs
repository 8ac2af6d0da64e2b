//! How a command fails: an exit code that scripts can rely on, and the one
//! line that says why.

use needs_you_reporter::client::{Failure, FailureKind};

/// Exit codes (also in `--help`).
pub mod exit {
    pub const OK: i32 = 0;
    /// The server refused the request and said why.
    pub const REFUSED: i32 = 1;
    pub const USAGE: i32 = 2;
    /// Not logged in, or the login was refused (revoked, unknown).
    pub const LOGIN: i32 = 3;
    /// The server is out of reach or failing.
    pub const SERVER: i32 = 4;
    /// `run`: the command was not found.
    pub const NOT_FOUND: i32 = 127;
}

/// A failed command: its exit code and the one line that says why.
#[derive(Debug)]
pub struct Fail {
    pub code: i32,
    pub message: String,
}

impl Fail {
    pub fn new(code: i32, message: impl Into<String>) -> Fail {
        Fail {
            code,
            message: message.into(),
        }
    }
}

/// Its one line.
impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<Failure> for Fail {
    fn from(f: Failure) -> Fail {
        match f.kind {
            FailureKind::Unreachable | FailureKind::Server => Fail::new(exit::SERVER, f.message),
            FailureKind::Refused => Fail::new(
                exit::LOGIN,
                format!(
                    "the server refused this login ({}): it was revoked or replaced; \
                     `needs-you login URL` with a new pairing code replaces it",
                    f.message
                ),
            ),
            FailureKind::Rejected => Fail::new(exit::REFUSED, f.message),
        }
    }
}

pub type Result<T> = std::result::Result<T, Fail>;
