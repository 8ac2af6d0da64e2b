//! What goes wrong in `report-prompt`, by kind. Each kind has a stable code
//! ([`Error::code`]) for programs and tests; the message is the one line a
//! person reads: on stderr from a hook, in the state directory's log from a
//! detached helper, or from `needs-you`.

use std::fmt;

/// A failure, by what failed, with what a person reads of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The hook's event: unreadable, not JSON, no session.
    Event(String),
    /// The set-up: no server address or task credential, or a bad one.
    Setup(String),
    /// The state directory, or a file in it.
    State(String),
    /// A CLI's settings or plugin files: unreadable, or not as expected.
    Settings(String),
    /// The terminal: tmux, a pane, the agent's process in it.
    Terminal(String),
    /// An agent's own protocol, where needs-you speaks it (Codex's
    /// app-server): its socket and its messages.
    Protocol(String),
    /// Starting a detached helper (the sender, the relay).
    Helper(String),
    /// The needs-you server: out of reach, or refusing.
    Server(String),
    /// Handing an answer to the agent: its hook's output, its plugin.
    Agent(String),
    /// The command line.
    Usage(String),
}

impl Error {
    /// The kind's stable code.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Event(_) => "event",
            Error::Setup(_) => "setup",
            Error::State(_) => "state",
            Error::Settings(_) => "settings",
            Error::Terminal(_) => "terminal",
            Error::Protocol(_) => "protocol",
            Error::Helper(_) => "helper",
            Error::Server(_) => "server",
            Error::Agent(_) => "agent",
            Error::Usage(_) => "usage",
        }
    }

    /// What a person reads.
    pub fn message(&self) -> &str {
        match self {
            Error::Event(m)
            | Error::Setup(m)
            | Error::State(m)
            | Error::Settings(m)
            | Error::Terminal(m)
            | Error::Protocol(m)
            | Error::Helper(m)
            | Error::Server(m)
            | Error::Agent(m)
            | Error::Usage(m) => m,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}
