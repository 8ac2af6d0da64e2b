//! Decisions and choices from afar, on this machine: the private link
//! between the relay, which holds the task's one connection to the Worker,
//! and the hook or plugin that waits, while its dialog is on screen, for an
//! answer it can hand the agent.
//!
//! ```text
//! $DIR/relay-<task key>.sock    the relay's Unix socket (the directory is 0700)
//!
//! waiter -> relay   {"session": "…", "awaits": {"request": "<digest>"}}   one line: what it
//!                   waits for (or "awaits": "message")
//! relay  -> waiter  {"answer_id": "…", "awaits": …, "answer": {…}}   one line: the answer, once
//! waiter -> relay   {"took": true}                        once the agent has it
//! ```
//!
//! A waiter is the `PermissionRequest` hook of Claude Code (which runs while
//! its dialog is on screen, and ends itself when the transcript shows the
//! person answered there: [`crate::afar::answered_there`]), or `report-prompt
//! __await`, which our OpenCode plugin starts and ends, or Codex's
//! app-server client, for a request or, as a message waiter
//! ([`wait_for_message`], `"awaits": "message"`), for a reply's text. It
//! waits on the socket, without a network connection of its own and without
//! polling; it never delays the dialog, which is already on screen. The
//! relay hands an answer only to the waiter whose session and request are the
//! answer's, and only while the session's open question here is the one the
//! answer names ([`crate::afar::relay`]); the waiter checks the digest again,
//! refuses an answer it was handed once already (`$DIR/spent-answers`, its
//! ids), and hands the agent nothing else.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use needs_you_core::afar::{AnswerBody, Refusal, Verdict};
use needs_you_core::classify::Takeable;
use needs_you_core::relay_messages::NotDone;
use serde::{Deserialize, Serialize};

/// What tells a waiter that its dialog ended without an answer from afar:
/// Claude Code's transcript showing the person answered in the terminal
/// ([`crate::afar::answered_there`]), or Codex's server saying the request was
/// resolved ([`crate::afar::codex_client`]). [`wait`] sleeps on its `fd` and asks
/// `over` when it is readable.
pub trait DialogEnd {
    fn fd(&self) -> std::os::fd::RawFd;
    /// Whether the dialog is over; false when the fd woke for nothing.
    fn over(&mut self) -> bool;
}

/// How long a waiter waits for an answer: a person may take minutes. The
/// hook's own timeout in the CLI's settings is longer (`install`), so that
/// this ends first and cleanly.
pub const WAIT_FOR: Duration = Duration::from_secs(55 * 60);
/// How long a relay holds an answer for a waiter that is not there yet: the
/// dialog was reported (Claude Code's `PreToolUse`) a moment before its
/// `PermissionRequest` hook starts waiting.
pub const HOLD_FOR: Duration = Duration::from_secs(5);
/// How long the relay waits for the waiter to say the agent took it.
const TOOK_WITHIN: Duration = Duration::from_secs(3);

/// The relay's socket for a task.
pub fn socket_path(dir: &Path, task: &str) -> PathBuf {
    dir.join(format!("relay-{task}.sock"))
}

/// What a waiter waits for: the answer to one request, named by its digest,
/// or the person's message to its session's open reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Awaits {
    Request(String),
    Message,
}

#[derive(Serialize, Deserialize)]
struct Wait {
    session: String,
    awaits: Awaits,
}

#[derive(Serialize, Deserialize)]
struct Handed {
    #[serde(default)]
    answer_id: String,
    awaits: Awaits,
    answer: AnswerBody,
}

/// The answers handed to a waiter on this machine, by id, so that none is
/// taken twice: the newest [`SPENT_KEPT`], one a line.
const SPENT_FILE: &str = "spent-answers";
const SPENT_KEPT: usize = 1000;

/// Records `answer_id` as spent in `file`, unless it is there already (or
/// is no id at all, or the file cannot be kept): false then, and the answer
/// is not taken.
pub(crate) fn spend(file: &Path, answer_id: &str) -> bool {
    use std::io::{Read, Seek};
    use std::os::unix::fs::OpenOptionsExt;
    if answer_id.is_empty() || answer_id.contains(char::is_whitespace) {
        return false;
    }
    let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .open(file)
    else {
        return false;
    };
    if f.lock().is_err() {
        return false;
    }
    let mut text = String::new();
    if f.read_to_string(&mut text).is_err() {
        return false;
    }
    let mut ids: Vec<&str> = text.lines().collect();
    if ids.contains(&answer_id) {
        return false;
    }
    ids.push(answer_id);
    let keep = &ids[ids.len().saturating_sub(SPENT_KEPT)..];
    let out = keep.join("\n") + "\n";
    f.set_len(0).is_ok() && f.rewind().is_ok() && f.write_all(out.as_bytes()).is_ok()
}

#[derive(Serialize, Deserialize)]
struct Took {
    took: bool,
    /// Why not, when it is a refusal of ours ([`Refusal::code`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    code: Option<String>,
}

/// Why the relay could not hand an answer on.
#[derive(Debug, PartialEq, Eq)]
pub enum NotHanded {
    /// One of the binding rules refused it.
    Refused(Refusal),
    /// Nobody took it: its code, and why for a person.
    Failed(NotDone, String),
}

// ---- the waiter's side --------------------------------------------------------

/// An answer handed to this waiter; [`Answered::took`] tells the relay the
/// agent has it.
pub struct Answered {
    pub answer_id: String,
    pub answer: AnswerBody,
    stream: UnixStream,
}

impl Answered {
    pub fn took(mut self) {
        let line = serde_json::to_string(&Took {
            took: true,
            code: None,
        })
        .unwrap_or_default();
        let _ = writeln!(self.stream, "{line}");
    }
}

/// What a waiter waits for: the answer to one request, or the person's
/// message for its session's open reply ([`wait_for_message`]).
#[derive(Clone, Copy)]
enum Expect<'a> {
    Request(&'a Takeable),
    Message,
}

/// Waits for the person's message to the reply open in `session`, as
/// [`wait`] waits for a request's answer: Codex's app-server client, which
/// sends it to the thread as its next turn. A text, once, and nothing else.
pub fn wait_for_message(
    path: &Path,
    session: &str,
    mut there: Option<&mut dyn DialogEnd>,
) -> Option<Answered> {
    let deadline = Instant::now() + WAIT_FOR;
    match wait_once(path, session, Expect::Message, &mut there, deadline)? {
        Waited::Answered(a) => Some(a),
        Waited::Again => None,
    }
}

/// Waits for the answer to `takeable` of `session`: registers with the
/// task's relay listening on `path` (the caller has started it), and blocks
/// until the relay hands an answer for this very request, or [`WAIT_FOR`]
/// passes, or the relay goes away, or `there` says the dialog ended (it was
/// answered in its terminal). `None` then: the dialog stays for the terminal. It
/// sleeps in `poll` all the while: no wake-up but for one of those.
pub fn wait(
    path: &Path,
    session: &str,
    takeable: &Takeable,
    mut there: Option<&mut dyn DialogEnd>,
) -> Option<Answered> {
    let deadline = Instant::now() + WAIT_FOR;
    loop {
        match wait_once(
            path,
            session,
            Expect::Request(takeable),
            &mut there,
            deadline,
        )? {
            Waited::Answered(a) => return Some(a),
            // A made-up choice refused: the dialog still waits for a real one.
            Waited::Again => continue,
        }
    }
}

/// What one registration with the relay gave.
enum Waited {
    Answered(Answered),
    /// Refused as a choice this dialog does not offer: wait again.
    Again,
}

fn wait_once(
    path: &Path,
    session: &str,
    expect: Expect,
    there: &mut Option<&mut dyn DialogEnd>,
    deadline: Instant,
) -> Option<Waited> {
    // A relay just started needs a moment to open its socket.
    let started = Instant::now();
    let mut stream = loop {
        match UnixStream::connect(path) {
            Ok(s) => break s,
            Err(_) if started.elapsed() < Duration::from_secs(5) => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Err(_) => return None,
        }
    };
    let awaits = match expect {
        Expect::Request(t) => Awaits::Request(t.takes.digest.clone()),
        Expect::Message => Awaits::Message,
    };
    let wait = Wait {
        session: session.to_owned(),
        awaits: awaits.clone(),
    };
    writeln!(stream, "{}", serde_json::to_string(&wait).ok()?).ok()?;
    loop {
        let mut fds = vec![libc::pollfd {
            fd: stream.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        if let Some(t) = &there {
            fds.push(libc::pollfd {
                fd: t.fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: `fds` is a live array of its length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return None;
        }
        if fds[0].revents != 0 {
            break; // the answer, or the relay gone
        }
        if fds.get(1).is_some_and(|f| f.revents != 0) && there.as_mut().is_some_and(|t| t.over()) {
            return None;
        }
    }
    // The relay writes its one line at once: a short wait finishes it.
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let mut line = String::new();
    BufReader::new(stream.try_clone().ok()?)
        .read_line(&mut line)
        .ok()?;
    let handed: Handed = serde_json::from_str(&line).ok()?;
    // Checked again here, by the one that hands it on: only this request's
    // answer, of the form this request takes, and only once.
    let form = match expect {
        Expect::Request(t) => t.takes.takes,
        Expect::Message => needs_you_core::afar::Afar::Text,
    };
    if handed.awaits != awaits || handed.answer.form() != form {
        return None;
    }
    // A lasting choice only as this dialog offers it: one that a made-up
    // report showed is refused, and nothing is handed on.
    if let (
        AnswerBody::Decision {
            decision: Verdict::Lasting(id),
            ..
        },
        Expect::Request(takeable),
    ) = (&handed.answer, expect)
    {
        if needs_you_core::lasting::find(&takeable.request, id).is_none() {
            let refused = Took {
                took: false,
                code: Some(Refusal::NotOffered.code().to_owned()),
            };
            let mut stream = stream;
            let _ = writeln!(stream, "{}", serde_json::to_string(&refused).ok()?);
            return Some(Waited::Again);
        }
    }
    // Choices only as this dialog asks them, on the card every device built
    // from its request (its labels as shown): a server that cannot read the
    // dialog (its words sealed) checked none.
    if let (AnswerBody::Choices { choices }, Expect::Request(takeable)) = (&handed.answer, expect) {
        let card = needs_you_core::classify::card::to_sign(
            needs_you_core::Kind::Dialog,
            &takeable.request,
        );
        if let Some(why) = needs_you_core::afar::check_choices(choices, &card.questions) {
            let refused = Took {
                took: false,
                code: Some(Refusal::WrongAnswer(why).code().to_owned()),
            };
            let mut stream = stream;
            let _ = writeln!(stream, "{}", serde_json::to_string(&refused).ok()?);
            return Some(Waited::Again);
        }
    }
    if !spend(&path.with_file_name(SPENT_FILE), &handed.answer_id) {
        let refused = Took {
            took: false,
            code: Some(Refusal::Spent.code().to_owned()),
        };
        let mut stream = stream;
        let _ = writeln!(stream, "{}", serde_json::to_string(&refused).ok()?);
        return None;
    }
    Some(Waited::Answered(Answered {
        answer_id: handed.answer_id,
        answer: handed.answer,
        stream,
    }))
}

// ---- the relay's side ------------------------------------------------------

struct Waiter {
    session: String,
    awaits: Awaits,
    stream: UnixStream,
}

/// The waiters registered with this relay.
#[derive(Default)]
pub struct Waiters {
    list: Mutex<Vec<Waiter>>,
    arrived: Condvar,
}

impl Waiters {
    /// Opens the socket and accepts waiters on a thread of their own.
    pub fn listen(path: &Path) -> std::io::Result<Arc<Waiters>> {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path)?;
        let waiters = Arc::new(Waiters::default());
        let accepting = Arc::clone(&waiters);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                accepting.register(stream);
            }
        });
        Ok(waiters)
    }

    fn register(&self, stream: UnixStream) {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let mut line = String::new();
        let Ok(reader) = stream.try_clone() else {
            return;
        };
        if BufReader::new(reader).read_line(&mut line).is_err() {
            return;
        }
        let Ok(wait) = serde_json::from_str::<Wait>(&line) else {
            return;
        };
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|w| !gone(&w.stream));
        // One dialog of a session is on screen at a time, and the server
        // lists one question per session: the newest waiter is that one's.
        // An older one is let go (its hook ends, the dialog it waited for is
        // gone or behind this one).
        for old in list.iter().filter(|w| w.session == wait.session) {
            let _ = old.stream.shutdown(std::net::Shutdown::Both);
        }
        list.retain(|w| w.session != wait.session);
        list.push(Waiter {
            session: wait.session,
            awaits: wait.awaits,
            stream,
        });
        self.arrived.notify_all();
    }

    /// Whether a message waiter ([`wait_for_message`]) is registered for
    /// `session`: a reply's answer is then handed to it, not typed.
    pub fn waits_for_message(&self, session: &str) -> bool {
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|w| !gone(&w.stream));
        list.iter()
            .any(|w| w.session == session && w.awaits == Awaits::Message)
    }

    /// Whether any waiter is registered (the relay then stays up).
    pub fn any(&self) -> bool {
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|w| !gone(&w.stream));
        !list.is_empty()
    }

    /// Hands `answer` (`answer_id`) to the waiter of `session` that `awaits` it,
    /// waiting up to [`HOLD_FOR`] for it to register; then waits for it to
    /// say the agent took it. Why not, for the person, when it could not.
    pub fn hand(
        &self,
        session: &str,
        awaits: &Awaits,
        answer_id: &str,
        answer: &AnswerBody,
    ) -> Result<(), NotHanded> {
        let deadline = Instant::now() + HOLD_FOR;
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        let waiter = loop {
            list.retain(|w| !gone(&w.stream));
            if let Some(i) = list
                .iter()
                .position(|w| w.session == session && w.awaits == *awaits)
            {
                break list.remove(i);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(NotHanded::Failed(
                    NotDone::NoWaiter,
                    "the dialog is no longer waiting for an answer: it was answered in the terminal, or it changed"
                        .into(),
                ));
            }
            list = self
                .arrived
                .wait_timeout(list, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        drop(list);
        let mut stream = waiter.stream;
        let handed = Handed {
            answer_id: answer_id.to_owned(),
            awaits: awaits.clone(),
            answer: answer.clone(),
        };
        let line = serde_json::to_string(&handed)
            .map_err(|e| NotHanded::Failed(NotDone::NotTaken, e.to_string()))?;
        writeln!(stream, "{line}").map_err(|_| {
            NotHanded::Failed(
                NotDone::NoWaiter,
                "the dialog closed as the answer arrived (answered in the terminal?)".to_owned(),
            )
        })?;
        let _ = stream.set_read_timeout(Some(TOOK_WITHIN));
        let mut reply = String::new();
        let read = BufReader::new(stream).read_line(&mut reply);
        match (read, serde_json::from_str::<Took>(&reply)) {
            (Ok(_), Ok(Took { took: true, .. })) => Ok(()),
            (Ok(_), Ok(Took { code: Some(c), .. })) if c == Refusal::Spent.code() => {
                Err(NotHanded::Refused(Refusal::Spent))
            }
            (Ok(_), Ok(Took { code: Some(c), .. })) if c == Refusal::NotOffered.code() => {
                Err(NotHanded::Refused(Refusal::NotOffered))
            }
            (Ok(_), Ok(Took { code: Some(c), .. }))
                if c == Refusal::WrongAnswer(String::new()).code() =>
            {
                Err(NotHanded::Refused(Refusal::WrongAnswer(
                    "these choices do not answer the dialog as the agent's machine has it".into(),
                )))
            }
            _ => Err(NotHanded::Failed(
                NotDone::NotTaken,
                "the agent did not take it: its dialog closed first".into(),
            )),
        }
    }
}

/// Whether a waiter's end is closed (the hook ended: its dialog was answered
/// in the terminal, or it timed out).
fn gone(stream: &UnixStream) -> bool {
    let mut byte = [0u8; 1];
    let _ = stream.set_nonblocking(true);
    let closed = matches!(std::io::Read::read(&mut &*stream, &mut byte), Ok(0));
    let _ = stream.set_nonblocking(false);
    closed
}

#[cfg(test)]
mod tests {
    use super::*;
    use needs_you_core::afar::{Afar, Takes, Verdict};

    fn takeable(digest: &str) -> Takeable {
        Takeable {
            takes: Takes {
                takes: Afar::Decision,
                digest: digest.into(),
            },
            request: needs_you_core::request::Request::new("T", &serde_json::json!({})),
            questions: Vec::new(),
        }
    }

    fn allow() -> AnswerBody {
        AnswerBody::Decision {
            decision: Verdict::Allow,
            message: None,
        }
    }

    #[test]
    fn an_answer_reaches_only_the_newest_waiter_of_its_session_and_digest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("relay.sock");
        let waiters = Waiters::listen(&path).unwrap();
        let waiting = |digest: &'static str| {
            let path = path.clone();
            std::thread::spawn(move || {
                wait(&path, "s1", &takeable(digest), None).map(|a| {
                    let answer = a.answer.clone();
                    a.took();
                    answer
                })
            })
        };
        let older = waiting("d1");
        std::thread::sleep(Duration::from_millis(300));
        let newer = waiting("d1");
        // The older waiter is let go as the newer one registers.
        assert_eq!(older.join().unwrap(), None);
        // Another digest finds nobody; this one, the newer waiter, which took it.
        assert!(waiters
            .hand("s1", &Awaits::Request("d2".into()), "ans_1", &allow())
            .is_err());
        assert_eq!(
            waiters.hand("s1", &Awaits::Request("d1".into()), "ans_1", &allow()),
            Ok(())
        );
        assert_eq!(newer.join().unwrap(), Some(allow()));
        // The same answer again, to a new waiter of the very same request:
        // spent, never taken twice.
        let again = waiting("d1");
        assert_eq!(
            waiters.hand("s1", &Awaits::Request("d1".into()), "ans_1", &allow()),
            Err(NotHanded::Refused(Refusal::Spent))
        );
        assert_eq!(again.join().unwrap(), None);
        let fresh = waiting("d1");
        assert_eq!(
            waiters.hand("s1", &Awaits::Request("d1".into()), "ans_2", &allow()),
            Ok(())
        );
        assert_eq!(fresh.join().unwrap(), Some(allow()));
    }

    #[test]
    fn a_message_waiter_takes_one_text_and_no_decision() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("relay.sock");
        let waiters = Waiters::listen(&path).unwrap();
        let waiting = || {
            let path = path.clone();
            std::thread::spawn(move || {
                wait_for_message(&path, "s1", None).map(|a| {
                    let answer = a.answer.clone();
                    a.took();
                    answer
                })
            })
        };
        let text = AnswerBody::Text {
            text: "go on".into(),
        };
        let w = waiting();
        assert!(waiters_soon(&waiters, "s1"));
        assert!(!waiters.waits_for_message("s2"));
        // A decision made up for the message's place is handed nothing.
        assert!(waiters
            .hand("s1", &Awaits::Message, "ans_1", &allow())
            .is_err());
        assert_eq!(w.join().unwrap(), None);
        let w = waiting();
        assert!(waiters_soon(&waiters, "s1"));
        assert_eq!(waiters.hand("s1", &Awaits::Message, "ans_2", &text), Ok(()));
        assert_eq!(w.join().unwrap(), Some(text.clone()));
        // Spent: the same answer never goes twice.
        let w = waiting();
        assert!(waiters_soon(&waiters, "s1"));
        assert_eq!(
            waiters.hand("s1", &Awaits::Message, "ans_2", &text),
            Err(NotHanded::Refused(Refusal::Spent))
        );
        assert_eq!(w.join().unwrap(), None);
    }

    /// Whether a message waiter of `session` registers within a second.
    fn waiters_soon(waiters: &Waiters, session: &str) -> bool {
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until {
            if waiters.waits_for_message(session) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn a_lasting_choice_is_taken_only_if_the_waiter_s_own_dialog_offers_it_and_a_refusal_keeps_it_waiting(
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("relay.sock");
        let waiters = Waiters::listen(&path).unwrap();
        let rule = serde_json::json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                                      "behavior": "allow", "destination": "localSettings"});
        let mut own = takeable("d1");
        own.request.lasting = vec![rule.clone()];
        let waiting = || {
            let (path, own) = (path.clone(), own.clone());
            std::thread::spawn(move || {
                wait(&path, "s1", &own, None).map(|a| {
                    let answer = a.answer.clone();
                    a.took();
                    answer
                })
            })
        };
        let keep = |id: String| AnswerBody::Decision {
            decision: Verdict::Lasting(id),
            message: None,
        };
        let mut wider = rule.clone();
        wider["rules"][0] = serde_json::json!({"toolName": "Bash"});
        let first = waiting();
        let made_up = keep(needs_you_core::lasting::id_of(&wider));
        assert_eq!(
            waiters.hand("s1", &Awaits::Request("d1".into()), "ans_1", &made_up),
            Err(NotHanded::Refused(Refusal::NotOffered))
        );
        // Nothing handed on, and the dialog still waits for a real answer.
        let offered = keep(needs_you_core::lasting::id_of(&rule));
        assert_eq!(
            waiters.hand("s1", &Awaits::Request("d1".into()), "ans_2", &offered),
            Ok(())
        );
        assert_eq!(first.join().unwrap(), Some(offered));
    }

    #[test]
    fn choices_are_taken_only_as_the_waiter_s_own_dialog_asks_and_a_refusal_keeps_it_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("relay.sock");
        let waiters = Waiters::listen(&path).unwrap();
        let mut own = takeable("d2");
        own.takes.takes = Afar::Choices;
        own.request = needs_you_core::request::Request::new(
            "AskUserQuestion",
            &serde_json::json!({"questions": [{"question": "Which database?", "header": "DB",
                "multiSelect": false, "custom": false,
                "options": [{"label": "SQLite"}, {"label": "Postgres"}]}]}),
        );
        let waiting = {
            let (path, own) = (path.clone(), own.clone());
            std::thread::spawn(move || {
                wait(&path, "s1", &own, None).map(|a| {
                    let answer = a.answer.clone();
                    a.took();
                    answer
                })
            })
        };
        let choose = |c: serde_json::Value| AnswerBody::Choices {
            choices: serde_json::from_value(c).unwrap(),
        };
        let awaits = Awaits::Request("d2".into());
        for (id, bad) in [
            ("ans_1", serde_json::json!([["SQLite", "Postgres"]])),
            ("ans_2", serde_json::json!([["MariaDB"]])),
            ("ans_3", serde_json::json!([["SQLite"], ["Postgres"]])),
        ] {
            let refused = waiters.hand("s1", &awaits, id, &choose(bad.clone()));
            assert!(
                matches!(refused, Err(NotHanded::Refused(Refusal::WrongAnswer(_)))),
                "{bad}: {refused:?}"
            );
        }
        // Nothing handed on, and the dialog still waits for a real answer.
        let good = choose(serde_json::json!([["Postgres"]]));
        assert_eq!(waiters.hand("s1", &awaits, "ans_4", &good), Ok(()));
        assert_eq!(waiting.join().unwrap(), Some(good));
    }

    #[test]
    fn an_answer_id_is_spent_once_and_the_newest_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(SPENT_FILE);
        assert!(spend(&file, "ans_a"));
        assert!(!spend(&file, "ans_a"));
        assert!(!spend(&file, ""), "no id, nothing to bind");
        for i in 0..SPENT_KEPT {
            assert!(spend(&file, &format!("ans_{i}")));
        }
        let kept = std::fs::read_to_string(&file).unwrap();
        assert_eq!(kept.lines().count(), SPENT_KEPT);
        assert!(!spend(&file, &format!("ans_{}", SPENT_KEPT - 1)));
    }

    #[test]
    fn a_waiter_ends_when_its_dialog_is_answered_in_the_terminal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("relay.sock");
        let _waiters = Waiters::listen(&path).unwrap();
        let transcript = dir.path().join("t.jsonl");
        let input = serde_json::json!({"command": "make"});
        let digest = needs_you_core::afar::digest("Bash", &input);
        let used = serde_json::json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": input}]}});
        std::fs::write(&transcript, format!("{used}\n")).unwrap();
        let mut there =
            crate::afar::answered_there::AnsweredThere::follow(&transcript, &digest).unwrap();
        let writer = {
            let transcript = transcript.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                let ended = serde_json::json!({"type": "user", "message": {"content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1"}]}});
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(transcript)
                    .unwrap();
                writeln!(f, "{ended}").unwrap();
            })
        };
        let started = Instant::now();
        assert!(wait(
            &path,
            "s1",
            &takeable(&digest),
            Some(&mut there as &mut dyn DialogEnd)
        )
        .is_none());
        assert!(started.elapsed() < Duration::from_secs(5));
        writer.join().unwrap();
    }
}
