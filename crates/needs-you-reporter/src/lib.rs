//! The agent machine's half of needs-you: everything `report-prompt` does,
//! and the pieces of it that the `needs-you` command line shares. The
//! `needs-you` package builds both binaries.
//!
//! `report-prompt` tells the needs-you server when a coding agent waits for
//! its person, and when the person answered.
//!
//! It runs inside the agent's loop, from Claude Code's and Codex's hooks and
//! from our OpenCode and Hermes plugins, so in hook mode it keeps three
//! promises: nothing on stdout, exit code 0, at most one line on stderr. It
//! decides, updates its state files, hands the request to a detached copy of
//! itself and returns in a few milliseconds.
//!
//! Its public modules are those the `needs-you` command line shares (linked
//! below); the rest are `report-prompt`'s own. Grouped by the process each
//! runs in:
//!
//! * `hook`: hook mode, inside the agent's loop: read an event, decide,
//!   record, hand off (and the watcher it starts, `__watch`).
//! * [`send`]: the outbox and the detached sender (`__send`), which seals a
//!   report's words before they leave.
//! * [`afar`]: answers from afar: the relay (`__relay`), the waiters that
//!   take its decisions (the waiting hook, `__await`, Codex's client), and
//!   the one road an answer takes to the agent.
//! * [`install`]: adding and removing our hooks in each CLI's settings, and
//!   whether a CLI reports here ([`install::status()`]).
//! * `doctor`: a check of the whole set-up, for a person.
//!
//! What they share:
//!
//! * [`commands`]: `report-prompt`'s entry: its subcommands run.
//! * [`error`]: what goes wrong, by kind, each with a stable code.
//! * `args`: its command line, parsed by hand (start-up is the hook's cost).
//! * `questions`: a question opened or closed here, and its report queued.
//! * [`state`]: the per-user state directory: markers and `seq`.
//! * [`detach`]: starting a detached helper that owns a lock (sender, watcher, relay).
//! * `procfs`: what Linux's `/proc` tells of a process.
//! * [`terminal`]: which terminal the agent runs in, and typing into it.
//! * [`owner`]: whom this machine answers to: the owner it pinned, and the
//!   file of the content key it seals with (the checks and the cryptography
//!   are `needs_you_trust`'s).
//! * [`clis`]: what this machine does for each CLI, one module each: its
//!   settings files, our plugin of it, its installer's and hooks' own rules.
//! * [`client`]: the Worker's JSON API for people's commands (`doctor`, `needs-you`).
//! * [`socket`]: a WebSocket to the Worker: the relay's, and `ls --watch`'s.
//! * [`program`]: finding a program as `exec` would.

pub mod afar;
mod args;
pub mod client;
pub mod clis;
pub mod commands;
pub mod detach;
mod doctor;
pub mod error;
mod hook;
pub mod install;
pub mod owner;
mod procfs;
pub mod program;
mod questions;
pub mod send;
pub mod socket;
pub mod state;
pub mod terminal;

/// The variable that names the `report-prompt` our plugins' hooks run
/// (else the PATH's): `needs-you run` sets it to the native binary beside
/// itself, so that a hook never goes through npm's launcher.
pub const REPORTER_VAR: &str = "NEEDS_YOU_REPORTER";

/// The variable that has the relay refuse every screen Show terminal asks
/// for, whatever the server says.
pub const NO_SCREEN_VAR: &str = "NEEDS_YOU_NO_SCREEN";

/// Every variable `needs-you run` hands an agent for its hooks, plugins and
/// relay: a hook whose CLI dropped some of them takes them back, all of
/// them alike, from the agent's own environment (`hook::adopt_task_vars`).
/// Losing one is never a quieter way to report: without the content key a
/// question would leave readable, without the owner answers could not be
/// checked, without the screen's refusal a screen could be read.
pub const TASK_VARS: &[&str] = &[
    send::URL_VAR,
    send::TOKEN_VAR,
    owner::OWNER_VAR,
    owner::KEYS_VAR,
    NO_SCREEN_VAR,
    REPORTER_VAR,
];

/// One line on stderr, prefixed with the program's name. Never fails: in the
/// agent's hook a closed stderr must not become a panic, nor the panic an
/// abort.
pub fn say(msg: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "report-prompt: {msg}");
}
