//! A question's two ends on this machine: marked open in the state directory
//! and its report queued, or marked closed and its close queued, the report
//! always queued under the state's lock so that reports leave in `seq` order
//! however hooks race. The hook opens and closes; the transcript watcher
//! closes what ended without a hook.

use needs_you_core::classify::close_applies;
use needs_you_core::{Cli, CloseReason, Report};

use crate::error::Error;
use crate::send::{self, Target};
use crate::state::{OpenQuestion, Opening, StateDir};

/// Marks `session`'s question open as `opening` says (with how long its
/// transcript was, for a CLI that has one, and the digest of what it takes
/// from afar), queues the report that `report` makes for its `seq`, and
/// makes sure a sender drains the queue.
pub fn open(
    dir: &StateDir,
    target: &Target,
    session: &str,
    opening: &Opening,
    report: impl FnOnce(u64) -> Report,
) -> Result<(), Error> {
    dir.record_opening(session, opening, |seq| {
        send::queue(&report(seq), dir.path(), target)
    })
    .map_err(state_error)??;
    // The sender reads the environment again; the hook checked it first, so
    // a set-up error stays on the hook's stderr, where a person can see it.
    send::ensure_sender(dir.path(), target)
}

/// Closes `session`'s open question here (with `opened`, only the one that
/// report opened) and tells the server, if one is open; nothing at all (not
/// even an environment check) when none is.
pub fn close(
    dir: &StateDir,
    cli: Cli,
    session: &str,
    reason: CloseReason,
    opened: Option<u64>,
) -> Result<(), Error> {
    close_by(dir, cli, session, reason, opened, None).map(drop)
}

/// [`close`] of the question opened at `opened`, saying whether it closed
/// it: false when the session's open question is no longer that one (an
/// event in the terminal closed it first).
pub fn close_if_still_open(
    dir: &StateDir,
    cli: Cli,
    session: &str,
    reason: CloseReason,
    opened: u64,
) -> Result<bool, Error> {
    close_by(dir, cli, session, reason, Some(opened), None)
}

/// [`close`] decided by an event of `agent` (a subagent; none: the person's
/// own agent), which ends only what [`close_applies`] says it ends; whether
/// it closed a question.
pub fn close_by(
    dir: &StateDir,
    cli: Cli,
    session: &str,
    reason: CloseReason,
    opened: Option<u64>,
    agent: Option<&str>,
) -> Result<bool, Error> {
    let applies = |q: &OpenQuestion| close_applies(reason, agent, q.agent.as_deref());
    let queued = dir
        .record_close_if(session, opened, applies, |seq| {
            let target = Target::from_env()?;
            let report = Report::Close {
                cli,
                session: session.to_owned(),
                seq,
                reason,
            };
            send::queue(&report, dir.path(), &target).map(|()| target)
        })
        .map_err(state_error)?;
    match queued {
        None => Ok(false),
        Some(target) => send::ensure_sender(dir.path(), &target?).map(|()| true),
    }
}

/// A state directory failure, for the hook's one line.
pub fn state_error(e: std::io::Error) -> Error {
    Error::State(format!("state directory: {e}"))
}
