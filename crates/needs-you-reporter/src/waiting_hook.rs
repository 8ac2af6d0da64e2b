//! A waiting hook: the hook that the CLI runs while its permission dialog
//! is on screen, and whose printed decision the CLI takes as the person's
//! (Claude Code's `PermissionRequest`, installed as a hook that waits). It
//! waits there for an answer from afar ([`waiters::wait`]) and takes it down
//! the one road ([`handover`]); without one (a person answered in the
//! terminal, as the transcript tells, or Esc ended this hook, or the wait
//! ran out), nothing: the dialog stays the terminal's.

use std::io::Write;
use std::path::PathBuf;

use needs_you_core::afar::AnswerBody;
use needs_you_core::classify::{claude_code_hook_output, Takeable};
use needs_you_core::Cli;
use serde_json::Value;

use crate::answered_there::AnsweredThere;
use crate::error::Error;
use crate::handover::{self, Closing, Outcome, Taker};
use crate::relay;
use crate::send;
use crate::state::StateDir;
use crate::waiters;

/// Waits for the answer to `takeable`, the dialog `event` announced, and
/// hands it to Claude Code on stdout: the one thing this hook ever prints.
pub fn take_from_afar(dir: &StateDir, session: &str, takeable: &Takeable, event: &Value) {
    let Ok(target) = send::Target::from_env() else {
        return;
    };
    if relay::ensure_relay(dir.path(), &target).is_err() {
        return;
    }
    let task = relay::task_key(&target);
    let socket = waiters::socket_path(dir.path(), &task);
    // Answered in the terminal, the dialog ends with no word to this hook:
    // its transcript says so.
    let mut there = event
        .get("transcript_path")
        .and_then(Value::as_str)
        .and_then(|t| AnsweredThere::follow(t.as_ref(), &takeable.takes.digest));
    let Some(answered) = waiters::wait(
        &socket,
        session,
        takeable,
        there.as_mut().map(|t| t as &mut dyn waiters::DialogEnd),
    ) else {
        return;
    };
    let mut taker = ClaudeCodeHook { event };
    match handover::deliver(dir, &task, session, takeable, answered, &mut taker) {
        Outcome::NotRecorded(why) | Outcome::NotHanded(why) => crate::say(why),
        Outcome::Taken | Outcome::DoesNotFit | Outcome::NotTaken => {}
    }
}

/// Claude Code's part of the road: its hook's decision, printed.
struct ClaudeCodeHook<'a> {
    event: &'a Value,
}

impl Taker for ClaudeCodeHook<'_> {
    fn translate(&self, answer: &AnswerBody, takeable: &Takeable) -> Option<Value> {
        Some(claude_code_hook_output(
            answer,
            &takeable.request,
            &takeable.questions,
        ))
        .filter(|o| !o.is_null())
    }

    /// Claude Code keeps a project's settings in the folder it was started
    /// in, which the hook's `cwd` leaves after a `cd`.
    fn project(&self) -> Option<PathBuf> {
        std::env::var_os("CLAUDE_PROJECT_DIR")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                self.event
                    .get("cwd")
                    .and_then(Value::as_str)
                    .map(PathBuf::from)
            })
    }

    fn hand_over(&mut self, form: Value) -> Result<bool, Error> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{form}")
            .and_then(|()| out.flush())
            .map(|()| true)
            .map_err(|e| Error::Agent(format!("cannot print the hook's decision: {e}")))
    }

    fn closing(&self) -> Closing {
        Closing::Here {
            cli: Cli::ClaudeCode,
            opened: None,
        }
    }
}
