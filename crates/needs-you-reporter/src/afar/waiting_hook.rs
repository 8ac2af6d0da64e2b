//! A waiting hook: the hook that the CLI runs while its permission dialog
//! is on screen, and whose printed decision the CLI takes as the person's
//! (Claude Code's `PermissionRequest`, installed as a hook that waits). It
//! waits there for an answer from afar ([`waiters::wait`]) and takes it down
//! the one road ([`handover`]) with the CLI's own [`Taker`] (its
//! [`Integration::waiting_hook_taker`](crate::clis::Integration::waiting_hook_taker));
//! without one (a person answered in the terminal, as the transcript tells,
//! or Esc ended this hook, or the wait ran out), nothing: the dialog stays
//! the terminal's.

use needs_you_core::classify::Takeable;
use serde_json::Value;

use crate::afar::answered_there::AnsweredThere;
use crate::afar::handover::{self, Outcome};
use crate::afar::relay;
use crate::afar::taker::Taker;
use crate::afar::waiters;
use crate::send;
use crate::state::StateDir;

/// Waits for the answer to `takeable`, the dialog `event` announced, and
/// hands it to the agent through `taker` (Claude Code's prints it on
/// stdout: the one thing this hook ever prints).
pub fn take_from_afar(
    dir: &StateDir,
    session: &str,
    takeable: &Takeable,
    event: &Value,
    mut taker: Box<dyn Taker + '_>,
) {
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
    match handover::deliver(
        dir,
        &task,
        session,
        Some(takeable),
        answered,
        taker.as_mut(),
    ) {
        Outcome::NotRecorded(why) | Outcome::NotHanded(why) => crate::say(why),
        Outcome::Taken | Outcome::DoesNotFit | Outcome::NotTaken => {}
    }
}
