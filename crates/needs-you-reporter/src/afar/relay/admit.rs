//! Whether an answer from afar may go on, checked again before each key
//! and decision: a reply only into the pane of its own open question, at an
//! empty prompt, while its session has not moved on; a decision or choices
//! only while the session's open question here is the one this machine
//! reported, for that very request. Every refusal carries a stable code
//! ([`Failure`]).

use std::time::{Duration, Instant};

use needs_you_core::afar::Refusal;
use needs_you_core::relay_messages::{Answer, FromRelay, NotDone};
use needs_you_core::{Cli, Kind};

use super::panes::{pane_file, PaneRecord};
use crate::error::Error;
use crate::state::StateDir;
use crate::terminal::{self, Pane};

/// Why an answer was not typed or handed on: its stable code, and why for
/// the person.
#[derive(Debug)]
pub(super) struct Failure {
    code: &'static str,
    pub(super) reason: String,
}

impl Failure {
    pub(super) fn new(code: NotDone, reason: impl Into<String>) -> Failure {
        Failure {
            code: code.as_str(),
            reason: reason.into(),
        }
    }

    pub(super) fn refused(refusal: Refusal) -> Failure {
        Failure {
            code: refusal.code(),
            reason: refusal.message(),
        }
    }

    /// An answer's own words refused ([`needs_you_core::answer::check`]).
    pub(super) fn refused_words(why: &'static str) -> Failure {
        Failure {
            code: Refusal::RefusedAnswer(why).code(),
            reason: why.to_owned(),
        }
    }

    pub(super) fn of(self, answer_id: String) -> FromRelay {
        FromRelay::Failed {
            answer_id,
            reason: self.reason,
            code: Some(self.code.to_owned()),
        }
    }
}

/// How long a reply's prompt may take to come back: the question opens at
/// the hook of the turn's end, a moment before some CLIs draw their idle
/// prompt again (Hermes shows its busy one, whose hint says a message then
/// interrupts, until its turn has wound down).
const PROMPT_SETTLES: Duration = Duration::from_secs(3);

/// How often the screen is read again meanwhile.
const PROMPT_POLL: Duration = Duration::from_millis(100);

/// Why this answer may not be typed, or the pane to type it into: besides
/// the pane's own checks, the prompt must be empty in its ordinary mode
/// where the CLI says how its screen shows that, within [`PROMPT_SETTLES`].
/// Every check is made again at each reading, since time passes between them.
pub(super) fn may_type(dir: &StateDir, task: &str, a: &Answer) -> Result<Pane, Failure> {
    let record = recorded_pane(dir, task, &a.session)?;
    let prompt = record
        .cli
        .map(Cli::describe)
        .and_then(|d| Some((d.name, d.prompt_ready?)));
    let since = Instant::now();
    loop {
        still_open(dir, a)?;
        let changed = |why: Error| Failure::new(NotDone::TerminalChanged, why.to_string());
        terminal::check(&record.pane).map_err(changed)?;
        let Some((name, ready)) = prompt else {
            return Ok(record.pane);
        };
        if ready(&terminal::capture(&record.pane).map_err(changed)?.to_plain()) {
            return Ok(record.pane);
        }
        if since.elapsed() >= PROMPT_SETTLES {
            return Err(Failure::new(NotDone::PromptNotReady, format!(
                "{name}'s prompt is not shown empty and at rest at the foot of its screen: a menu or dialog open in its place would take the answer as a choice, a half-typed line would join it, its shell mode would run it as a command, and a turn still winding down would take it as an interruption; answer in the terminal"
            )));
        }
        std::thread::sleep(PROMPT_POLL);
    }
}

/// Whether the machine's person ruled screens out (`NEEDS_YOU_NO_SCREEN`,
/// which `needs-you run --no-screen` also sets in the agent's environment):
/// the relay then shows no pane, and `run` starts tasks without screens.
pub fn no_screen() -> bool {
    std::env::var_os(crate::NO_SCREEN_VAR).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Why the answer's question is no longer the one its session waits on here.
pub(super) fn still_open(dir: &StateDir, a: &Answer) -> Result<(), Failure> {
    let open = dir
        .open_question(&a.session)
        .map_err(|e| {
            Failure::new(
                NotDone::StateUnreadable,
                format!("cannot read the state directory: {e}"),
            )
        })?
        .ok_or_else(|| {
            Failure::new(
                NotDone::NoLongerOpen,
                "the question is no longer open in the agent",
            )
        })?;
    if open.kind != Kind::Reply {
        return Err(Failure::new(
            NotDone::NowADialog,
            "the agent now waits on a dialog: answer it in the terminal",
        ));
    }
    // `open_seq` is the signed statement's (`needs_you_trust::admission`); `session_seq`
    // the server's, which can only narrow this further.
    if open.seq != a.open_seq || open.seq > a.session_seq {
        return Err(Failure::new(
            NotDone::MovedOn,
            "the agent has moved on since the answer was sent",
        ));
    }
    Ok(())
}

/// Whether a decision or choices may be handed on: only while the session's
/// open question on this machine is the one the answer names, opened by
/// this machine's own report (its `seq`) for the very request (its digest).
/// A report made up with the task credential elsewhere, or one this machine
/// has moved on from, takes nothing.
pub(super) fn may_hand(dir: &StateDir, a: &Answer, digest: &str) -> Result<(), Refusal> {
    let open = dir
        .open_question(&a.session)
        .ok()
        .flatten()
        .ok_or(Refusal::NotThisRequest)?;
    if open.seq != a.open_seq || open.digest.as_deref() != Some(digest) {
        return Err(Refusal::NotThisRequest);
    }
    Ok(())
}

/// The pane recorded for the session's open question, if the question is
/// of this task.
pub(super) fn recorded_pane(
    dir: &StateDir,
    task: &str,
    session: &str,
) -> Result<PaneRecord, Failure> {
    std::fs::read_to_string(pane_file(dir.path(), session))
        .ok()
        .and_then(|t| serde_json::from_str::<PaneRecord>(&t).ok())
        .filter(|r| r.task == task)
        .ok_or_else(|| {
            Failure::new(
                NotDone::NoTerminal,
                "this machine has no record of that question's terminal",
            )
        })
}

#[cfg(test)]
mod tests {
    use needs_you_core::afar::{AnswerBody, Verdict};
    use needs_you_core::relay_messages::Answer;

    use super::*;
    use crate::afar::relay::panes::record_pane;
    use crate::state::Opening;
    use crate::terminal::tmux::TmuxPane;

    fn state() -> (tempfile::TempDir, StateDir) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = StateDir::open(tmp.path().join("state")).unwrap();
        (tmp, dir)
    }

    /// Opens a question of `kind` for session `s1`, taking an answer to
    /// `digest`; its `seq`.
    fn open(dir: &StateDir, kind: Kind, digest: Option<&str>) -> u64 {
        let opening = Opening {
            kind,
            transcript: None,
            agent: None,
            digest,
            lasting: &[],
        };
        dir.record_opening("s1", &opening, |seq| seq).unwrap()
    }

    fn answer(open_seq: u64, session_seq: u64, body: AnswerBody) -> Answer {
        Answer {
            answer_id: "ans_1".into(),
            question_id: "q_1".into(),
            session: "s1".into(),
            open_seq,
            session_seq,
            body,
            digest: None,
            sealed: None,
            signed: None,
            devices: None,
        }
    }

    fn text() -> AnswerBody {
        AnswerBody::Text { text: "yes".into() }
    }

    fn code<T: std::fmt::Debug>(r: Result<T, Failure>) -> &'static str {
        r.expect_err("refused").code
    }

    #[test]
    fn a_reply_goes_on_only_while_its_question_is_the_sessions_open_reply() {
        let (_tmp, dir) = state();
        assert_eq!(
            code(still_open(&dir, &answer(0, 0, text()))),
            "no_longer_open"
        );
        let seq = open(&dir, Kind::Reply, None);
        assert!(still_open(&dir, &answer(seq, seq, text())).is_ok());
        // The machine reported past what the server had applied when the
        // answer was made: the agent has moved on.
        assert_eq!(
            code(still_open(&dir, &answer(seq, seq - 1, text()))),
            "moved_on"
        );
        // Signed for an earlier open of the session: whatever `session_seq`
        // the server sends with it.
        assert_eq!(
            code(still_open(&dir, &answer(seq - 1, u64::MAX, text()))),
            "moved_on"
        );
        let dialog = open(&dir, Kind::Dialog, None);
        assert_eq!(
            code(still_open(&dir, &answer(dialog, dialog, text()))),
            "now_a_dialog"
        );
    }

    #[test]
    fn a_decision_goes_on_only_for_this_machines_own_open_of_that_request() {
        let (_tmp, dir) = state();
        let allow = AnswerBody::Decision {
            decision: Verdict::Allow,
            message: None,
        };
        let a = |seq| answer(seq, seq, allow.clone());
        assert_eq!(may_hand(&dir, &a(1), "d1"), Err(Refusal::NotThisRequest));
        let seq = open(&dir, Kind::Permission, Some("d1"));
        assert_eq!(may_hand(&dir, &a(seq), "d1"), Ok(()));
        // Another request's digest, or an open this machine did not make.
        assert_eq!(may_hand(&dir, &a(seq), "d2"), Err(Refusal::NotThisRequest));
        assert_eq!(
            may_hand(&dir, &a(seq + 1), "d1"),
            Err(Refusal::NotThisRequest)
        );
    }

    #[test]
    fn only_a_pane_recorded_for_this_task_is_typed_into() {
        let (_tmp, dir) = state();
        assert_eq!(code(recorded_pane(&dir, "task-1", "s1")), "no_terminal");
        let pane = Pane::Tmux(TmuxPane {
            socket: "/tmp/none".into(),
            server_pid: 1,
            pane_id: "%1".into(),
            pane_pid: 1,
            pane_started: 1,
            agent: None,
            target: "s:0.0".into(),
        });
        let record = PaneRecord {
            task: "task-2".into(),
            pane,
            cli: Some(Cli::ClaudeCode),
        };
        record_pane(dir.path(), "s1", &record);
        assert_eq!(code(recorded_pane(&dir, "task-1", "s1")), "no_terminal");
        assert_eq!(recorded_pane(&dir, "task-2", "s1").unwrap().task, "task-2");
    }
}
