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
//! below); the rest are `report-prompt`'s own.
//!
//! * [`commands`]: `report-prompt`'s entry: its subcommands run.
//! * [`error`]: what goes wrong, by kind, each with a stable code.
//! * `args`: its command line, parsed by hand (start-up is the hook's cost).
//! * `hook`: hook mode: read an event, decide, record, hand off.
//! * `questions`: a question opened or closed here, and its report queued.
//! * [`state`]: the per-user state directory: markers and `seq`.
//! * [`detach`]: starting a detached helper that owns a lock (sender, watcher).
//! * `outbox`: the reports waiting to be sent, in order, one sender at a time.
//! * [`send`]: the detached sender, and where reports go.
//! * `parent`: whether Codex runs this hook in its shared background server.
//! * `procfs`: what Linux's `/proc` tells of a process.
//! * `watch`: a dialog's transcript, watched for an end that fires no hook.
//! * `transcript_reply`: a round's reply read from its transcript, where its event garbles it.
//! * `transcript_tail`: the end of a transcript, searched from its last line back.
//! * [`terminal`]: which terminal the agent runs in, and typing into it.
//! * `plan`: the plan of a Claude Code plan approval, from its transcript.
//! * `answered_there`: a waiting hook's dialog answered in its terminal, from its transcript.
//! * `waiters`: the private link between the relay and the hooks and plugins
//!   that wait for a decision from afar.
//! * `handover`: the one road of an answer from afar once a waiter has it:
//!   the CLI's own form, its lasting rule recorded, handed to the agent.
//! * `taker`: what one CLI supplies to that road: its words, its rules' place, its hand-over.
//! * `waiting_hook`: the hook that waits while its dialog is on screen
//!   (Claude Code's `PermissionRequest`) for that dialog's answer, handed over by its CLI's taker.
//! * `awaiting`: `__await`, a plugin's wait for its dialog's answer from afar.
//! * [`codex_client`]: the second client of a Codex task's app-server, which
//!   lists its approvals and answers them from afar through the protocol.
//! * `record`: the CLIs' payloads kept for fixtures (`NEEDS_YOU_RECORD_DIR`).
//! * [`relay`]: the detached relay that types answers from afar, and hands
//!   decisions and choices to `waiters`' waiters.
//! * [`owner`]: whom this machine answers to: the owner it pinned, and the
//!   file of the content key it seals with (the checks and the cryptography
//!   are `needs_you_trust`'s).
//! * [`sealed_report`]: this machine's content key, and a report's words
//!   sealed under it in the sender, before they leave.
//! * `granted`: the lasting rules this machine wrote for answers from
//!   afar, and taking one back.
//! * [`clis`]: what this machine does for each CLI, one module each: its
//!   settings files, our plugin of it, its installer's and hooks' own rules.
//! * [`install`]: adding and removing our hooks in each CLI's settings, and
//!   whether a CLI reports here ([`install::status()`]).
//! * `doctor`: a check of the whole set-up, for a person.
//! * [`client`]: the Worker's JSON API for people's commands (`doctor`, `needs-you`).
//! * [`socket`]: a WebSocket to the Worker: the relay's, and `ls --watch`'s.
//! * [`program`]: finding a program as `exec` would.

mod answered_there;
mod args;
mod awaiting;
pub mod client;
pub mod clis;
pub mod codex_client;
pub mod commands;
pub mod detach;
mod doctor;
pub mod error;
mod granted;
mod handover;
mod hook;
pub mod install;
mod outbox;
pub mod owner;
mod parent;
mod plan;
mod procfs;
pub mod program;
mod questions;
mod record;
pub mod relay;
pub mod sealed_report;
pub mod send;
pub mod socket;
pub mod state;
mod taker;
pub mod terminal;
mod transcript_reply;
mod transcript_tail;
mod waiters;
mod waiting_hook;
mod watch;

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
