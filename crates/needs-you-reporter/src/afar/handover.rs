//! The one road of an answer from afar on this machine, once a waiter has
//! it ([`waiters::wait`] checked that it is this request's, of its form, a
//! lasting choice its dialog offers, and never taken before): put into the
//! CLI's own form, its lasting rule recorded where one is written, handed to
//! the agent, the relay told that the agent took it, the question closed.
//!
//! Every waiter takes this road: Claude Code's waiting hook
//! (`waiting_hook`), our OpenCode plugin's `__await` (`awaiting`), Codex's
//! app-server client ([`crate::afar::codex_client`]) for an approval and for a
//! reply's message alike. What differs between them is
//! one [`Taker`] each: how its CLI words an answer, where its rules go, and
//! how it hands one over. Nothing here names a CLI.

use needs_you_core::afar::{AnswerBody, Verdict};
use needs_you_core::classify::Takeable;
use needs_you_core::CloseReason;

use crate::afar::granted::{self, Places};
use crate::afar::taker::{Closing, Taker};
use crate::afar::waiters::Answered;
use crate::error::Error;
use crate::questions;
use crate::state::StateDir;

/// What became of an answer on the road.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The agent took it.
    Taken,
    /// This request does not take it in that form: the waiter may wait for
    /// another.
    DoesNotFit,
    /// A lasting choice whose rule cannot be recorded here, so that it
    /// could never be taken back: left to the terminal.
    NotRecorded(Error),
    /// It could not be handed to the agent: why.
    NotHanded(Error),
    /// Handed, but the agent did not say it took it (a plugin that saw its
    /// dialog answered in the terminal first).
    NotTaken,
}

/// Takes `answered` for `takeable` (the request it waits on; none for a
/// reply's message) down the road to the agent, through `taker`. `task` is the relay's key of the task, under which a written
/// rule is recorded. The relay hears "took" only on [`Outcome::Taken`]; on
/// anything else it is let go, and the relay reports that the agent did not
/// take it.
pub fn deliver(
    dir: &StateDir,
    task: &str,
    session: &str,
    takeable: Option<&Takeable>,
    answered: Answered,
    taker: &mut dyn Taker,
) -> Outcome {
    let Some(form) = taker.translate(&answered.answer, takeable) else {
        return Outcome::DoesNotFit;
    };
    // A rule the CLI is about to write into a settings or rules file is
    // recorded first, so that it can be taken back from afar; one that
    // cannot be is not handed on (the dialog stays the terminal's).
    if let AnswerBody::Decision {
        decision: Verdict::Lasting(id),
        ..
    } = &answered.answer
    {
        let Some(lasting) = takeable.and_then(|t| needs_you_core::lasting::find(&t.request, id))
        else {
            return Outcome::DoesNotFit;
        };
        let Some(project) = taker.project() else {
            return Outcome::NotRecorded(Error::Settings(
                "the session's project folder is not known".into(),
            ));
        };
        let places = Places::here(&project);
        let recorded = granted::record(
            dir.path(),
            task,
            &answered.answer_id,
            lasting.written.as_ref(),
            &places,
        );
        if let Err(e) = recorded {
            return Outcome::NotRecorded(e);
        }
    }
    let closing = taker.closing();
    if let Closing::First { cli, opened } = closing {
        match questions::close_if_still_open(dir, cli, session, CloseReason::Answered, opened) {
            Ok(true) => {}
            // Answered in the terminal meanwhile: the person's own turn goes alone.
            Ok(false) => return Outcome::NotTaken,
            Err(e) => return Outcome::NotHanded(e),
        }
    }
    match taker.hand_over(form) {
        Ok(true) => {}
        Ok(false) => return Outcome::NotTaken,
        Err(e) => return Outcome::NotHanded(e),
    }
    answered.took();
    if let Closing::Here { cli, opened } = closing {
        if let Err(e) = questions::close(dir, cli, session, CloseReason::Answered, opened) {
            dir.log(&format!("the answered question could not close: {e}"));
        }
    }
    Outcome::Taken
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};
    use std::thread::JoinHandle;

    use needs_you_core::afar::{lasting_id, Afar, Takes};
    use needs_you_core::relay_messages::NotDone;
    use needs_you_core::request::Request;
    use serde_json::{json, Value};

    use super::*;
    use crate::afar::waiters::{self, Awaits, NotHanded, Waiters};

    const TASK: &str = "task-1";

    /// A CLI's part as a test sees it: what it was handed, and what the
    /// ledger of lasting rules held at that moment.
    struct Recording {
        fits: bool,
        project: Option<PathBuf>,
        /// Closes first, as Codex's message does, the question of this seq.
        first: Option<u64>,
        dir: PathBuf,
        handed: Arc<Mutex<Vec<(Value, bool)>>>,
    }

    impl Taker for Recording {
        fn translate(&self, answer: &AnswerBody, _: Option<&Takeable>) -> Option<Value> {
            self.fits.then(|| json!({"cli's own form": answer}))
        }

        fn project(&self) -> Option<PathBuf> {
            self.project.clone()
        }

        fn hand_over(&mut self, form: Value) -> Result<bool, Error> {
            let recorded = granted::holds_any(&self.dir, TASK);
            self.handed.lock().unwrap().push((form, recorded));
            Ok(true)
        }

        fn closing(&self) -> Closing {
            match self.first {
                Some(opened) => Closing::First {
                    cli: needs_you_core::Cli::Codex,
                    opened,
                },
                None => Closing::ByItsEvent,
            }
        }
    }

    /// A Claude Code permission that offers one lasting rule, kept in the
    /// project's own settings.
    fn suggestion() -> Value {
        json!({"type": "addRules", "behavior": "allow", "destination": "localSettings",
               "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}]})
    }

    fn takeable() -> Takeable {
        let mut request = Request::new("Bash", &json!({"command": "ls"}));
        request.lasting = vec![suggestion()];
        Takeable {
            takes: Takes {
                takes: Afar::Decision,
                digest: request.digest(),
            },
            request,
            questions: Vec::new(),
        }
    }

    fn decision(verdict: Verdict) -> AnswerBody {
        AnswerBody::Decision {
            decision: verdict,
            message: None,
        }
    }

    /// A waiter on `state`'s relay socket that takes what it is handed down
    /// the road through `taker`.
    fn waiter(state: &Path, taker: Recording) -> JoinHandle<Option<Outcome>> {
        let state = state.to_owned();
        std::thread::spawn(move || {
            let dir = StateDir::open(state.clone()).unwrap();
            let socket = waiters::socket_path(&state, TASK);
            let t = takeable();
            let answered = waiters::wait(&socket, "s1", &t, None)?;
            let mut taker = taker;
            Some(deliver(&dir, TASK, "s1", Some(&t), answered, &mut taker))
        })
    }

    struct World {
        _tmp: tempfile::TempDir,
        state: PathBuf,
        waiters: Arc<Waiters>,
        handed: Arc<Mutex<Vec<(Value, bool)>>>,
    }

    fn world() -> World {
        let tmp = tempfile::tempdir().unwrap();
        let state = tmp.path().join("state");
        StateDir::open(state.clone()).unwrap();
        let waiters = Waiters::listen(&waiters::socket_path(&state, TASK)).unwrap();
        World {
            state,
            waiters,
            handed: Arc::default(),
            _tmp: tmp,
        }
    }

    impl World {
        fn taker(&self, fits: bool, project: Option<&Path>) -> Recording {
            Recording {
                fits,
                project: project.map(Path::to_owned),
                first: None,
                dir: self.state.clone(),
                handed: Arc::clone(&self.handed),
            }
        }

        fn hand(&self, answer_id: &str, answer: &AnswerBody) -> Result<(), NotHanded> {
            let awaits = Awaits::Request(takeable().takes.digest);
            self.waiters.hand("s1", &awaits, answer_id, answer)
        }
    }

    #[test]
    fn an_answer_reaches_the_agent_in_its_clis_form_and_the_relay_hears_it_was_taken() {
        let w = world();
        let waiting = waiter(&w.state, w.taker(true, None));
        let allow = decision(Verdict::Allow);
        assert_eq!(w.hand("ans_1", &allow), Ok(()));
        assert_eq!(waiting.join().unwrap(), Some(Outcome::Taken));
        let handed = w.handed.lock().unwrap();
        assert_eq!(handed.len(), 1);
        assert_eq!(handed[0].0, json!({"cli's own form": allow}));
    }

    #[test]
    fn an_answer_the_request_does_not_take_is_handed_nowhere_and_the_relay_hears_not_taken() {
        let w = world();
        let waiting = waiter(&w.state, w.taker(false, None));
        let refused = w.hand("ans_1", &decision(Verdict::Allow));
        assert!(matches!(
            refused,
            Err(NotHanded::Failed(NotDone::NotTaken, _))
        ));
        assert_eq!(waiting.join().unwrap(), Some(Outcome::DoesNotFit));
        assert!(w.handed.lock().unwrap().is_empty());
    }

    #[test]
    fn a_lasting_rule_is_recorded_before_it_is_handed_over() {
        let w = world();
        let project = w.state.parent().unwrap().join("project");
        let waiting = waiter(&w.state, w.taker(true, Some(&project)));
        let lasting = decision(Verdict::Lasting(lasting_id(&suggestion())));
        assert_eq!(w.hand("ans_1", &lasting), Ok(()));
        assert_eq!(waiting.join().unwrap(), Some(Outcome::Taken));
        // Recorded when the agent was handed it: it can be taken back.
        assert!(w.handed.lock().unwrap()[0].1);
    }

    #[test]
    fn a_lasting_rule_that_cannot_be_recorded_is_never_handed_over() {
        let w = world();
        let waiting = waiter(&w.state, w.taker(true, None));
        let lasting = decision(Verdict::Lasting(lasting_id(&suggestion())));
        let refused = w.hand("ans_1", &lasting);
        assert!(matches!(
            refused,
            Err(NotHanded::Failed(NotDone::NotTaken, _))
        ));
        assert!(matches!(
            waiting.join().unwrap(),
            Some(Outcome::NotRecorded(_))
        ));
        assert!(w.handed.lock().unwrap().is_empty());
        assert!(!granted::holds_any(&w.state, TASK));
    }

    #[test]
    fn an_answer_that_closes_first_is_not_handed_over_once_its_question_is_gone() {
        // The person answered in the terminal meanwhile: nothing of this
        // session is open here, so their own turn goes alone.
        let w = world();
        let taker = Recording {
            first: Some(7),
            ..w.taker(true, None)
        };
        let waiting = waiter(&w.state, taker);
        let refused = w.hand("ans_1", &decision(Verdict::Allow));
        assert!(matches!(
            refused,
            Err(NotHanded::Failed(NotDone::NotTaken, _))
        ));
        assert_eq!(waiting.join().unwrap(), Some(Outcome::NotTaken));
        assert!(w.handed.lock().unwrap().is_empty());
    }
}
