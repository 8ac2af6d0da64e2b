//! `report-prompt __relay`: types answers from the page into the agent's
//! terminal.
//!
//! The hook that opens an answerable question starts it, detached, unless
//! one already runs for the same server and task credential on this machine
//! (a lock in the state directory, handed over like the sender's). It holds
//! one WebSocket to the Worker (`GET /v1/relay`, the task credential), and
//! for each answer:
//!
//! 1. says `received`;
//! 2. checks that the question is still the open one of its session here (a
//!    reply, and no report newer than the one the server last applied), and
//!    that the pane is still the agent's ([`terminal::check`]);
//! 3. types it as one line, if [`needs_you_core::answer::check`] passes it
//!    again (a command-like answer is refused here too), and
//!    Enter a second later;
//! 4. says `typed`, or `failed` with the reason.
//!
//! It takes back a lasting rule granted from afar when the Worker asks
//! (`granted`), and stays while its machine holds one.
//!
//! It also shows the pane of a session's open question when the Worker asks
//! (Show terminal, `Relay::screen`): only a pane recorded for an open
//! question of its own task, only while that pane still runs the agent,
//! read at most every [`SCREEN_EVERY`] (a faster reader gets the same
//! screen again), never with `NEEDS_YOU_NO_SCREEN` set.
//!
//! A dropped connection is made again after a pause (1 s, doubling to 30 s
//! while connections keep failing or dropping at once); answers queued
//! meanwhile come on the `hello`. An answer id already handled is never typed
//! twice. What became of the answers it handled on one connection is said
//! once more after the next `hello`, in case the drop lost it: the Worker
//! never sends an answer again once its question closed, and the close that
//! typing or taking an answer causes may well come first. A close that
//! says the task was revoked, or that a newer relay of the task took over
//! (`needs_you_core::relay`'s close codes), or a refused credential, ends it;
//! so does a machine where nothing of its task has been open for
//! `NEEDS_YOU_RELAY_IDLE_S` (600 s).
//! Its failures go to the state directory's log.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use std::sync::Arc;

use needs_you_core::afar::{AnswerBody, Refusal};
use needs_you_core::relay::NotDone;
use needs_you_core::relay::{
    Answer, FromRelay, ScreenAsk, ScreenReply, ToRelay, CLOSE_REPLACED, CLOSE_REVOKED,
};
use needs_you_core::screen::Screen;
use needs_you_core::{Cli, Kind};
use serde::{Deserialize, Serialize};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::Message;

use crate::afar::{self, Awaits, Waiters};
use crate::detach;
use crate::send::Target;
use crate::socket::{self, Opened, Socket};
use crate::state::{self, session_key, write_private, StateDir};
use crate::terminal::{self, Pane};

/// How long a read waits before the relay looks around (idle, ping).
const TICK: Duration = Duration::from_secs(20);
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The shortest time between two reads of one pane: a reader asking faster
/// is sent the last screen, so that no reader can make tmux work harder.
pub const SCREEN_EVERY: Duration = Duration::from_millis(200);
/// The most outcomes of answers kept, for an answer the Worker sends again:
/// an answer is handled once in a while, so these are the latest hours'. Past it they are all
/// forgotten at once; the waiters' own list of spent answers keeps a
/// decision from being taken twice beyond them.
const HANDLED_KEPT: usize = 100;

/// What the hook records for an open question's session: its pane, the
/// task it reports for (the outbox key of its server and credential), and
/// the CLI that asked, whose prompt is read before a reply is typed.
#[derive(Debug, Serialize, Deserialize)]
pub struct PaneRecord {
    pub task: String,
    pub pane: Pane,
    #[serde(default)]
    pub cli: Option<Cli>,
}

/// The key of a server and credential: the outbox's, the relay lock's.
pub fn task_key(target: &Target) -> String {
    session_key(&format!("{}\n{}", target.base, target.token))
}

fn pane_file(dir: &Path, session: &str) -> PathBuf {
    dir.join(format!("pane-{}", session_key(session)))
}

/// Records the pane of the session's open question (the hook, at the open).
pub fn record_pane(dir: &Path, session: &str, record: &PaneRecord) {
    if let Ok(text) = serde_json::to_string(record) {
        let _ = write_private(&pane_file(dir, session), text);
    }
}

/// Forgets the session's pane (an open outside tmux).
pub fn forget_pane(dir: &Path, session: &str) {
    let _ = std::fs::remove_file(pane_file(dir, session));
}

/// Starts the relay for this server and credential unless one runs.
pub fn ensure_relay(dir: &Path, target: &Target) -> Result<(), String> {
    let lock = match detach::try_lock(&dir.join(format!("relay-{}.lock", task_key(target)))) {
        Ok(Some(lock)) => lock,
        Ok(None) => return Ok(()),
        Err(e) => return Err(format!("cannot lock the relay: {e}")),
    };
    let args = [
        std::ffi::OsStr::new("__relay"),
        std::ffi::OsStr::new("--state-dir"),
        dir.as_os_str(),
    ];
    detach::spawn(args, lock).map_err(|e| format!("cannot start the relay: {e}"))
}

fn idle_limit() -> Duration {
    let s = std::env::var("NEEDS_YOU_RELAY_IDLE_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    Duration::from_secs(s)
}

/// Whether any session of this task has an open question on this machine.
fn anything_open(dir: &StateDir, task: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir.path()) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(key) = name.strip_prefix("pane-") else {
            return false;
        };
        let mine = std::fs::read_to_string(e.path())
            .ok()
            .and_then(|t| serde_json::from_str::<PaneRecord>(&t).ok())
            .is_some_and(|r| r.task == task);
        mine && dir.path().join(format!("open-{key}")).exists()
    })
}

/// Why an answer was not typed or handed on: its stable code, and why for
/// the person.
#[derive(Debug)]
struct Failure {
    code: &'static str,
    reason: String,
}

impl Failure {
    fn new(code: NotDone, reason: impl Into<String>) -> Failure {
        Failure {
            code: code.as_str(),
            reason: reason.into(),
        }
    }

    fn refused(refusal: Refusal) -> Failure {
        Failure {
            code: refusal.code(),
            reason: refusal.message(),
        }
    }

    /// An answer's own words refused ([`needs_you_core::answer::check`]).
    fn refused_words(why: &'static str) -> Failure {
        Failure {
            code: Refusal::RefusedAnswer(why).code(),
            reason: why.to_owned(),
        }
    }

    fn of(self, answer_id: String) -> FromRelay {
        FromRelay::Failed {
            answer_id,
            reason: self.reason,
            code: Some(self.code.to_owned()),
        }
    }
}

/// The pane recorded for the session's open question, if the question is
/// of this task.
fn recorded_pane(dir: &StateDir, task: &str, session: &str) -> Result<PaneRecord, Failure> {
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
fn may_type(dir: &StateDir, task: &str, a: &Answer) -> Result<Pane, Failure> {
    let record = recorded_pane(dir, task, &a.session)?;
    let prompt = record
        .cli
        .map(Cli::describe)
        .and_then(|d| Some((d.name, d.prompt_ready?)));
    let since = Instant::now();
    loop {
        still_open(dir, a)?;
        let changed = |why| Failure::new(NotDone::TerminalChanged, why);
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
    std::env::var_os("NEEDS_YOU_NO_SCREEN").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Why the answer's question is no longer the one its session waits on here.
fn still_open(dir: &StateDir, a: &Answer) -> Result<(), Failure> {
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
    if open.seq > a.session_seq {
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
fn may_hand(dir: &StateDir, a: &Answer, digest: &str) -> Result<(), Refusal> {
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

/// The task's relay socket: `GET /v1/relay` with its credential, saying it
/// can show screens.
fn connect(target: &Target) -> Opened {
    let auth = format!("Bearer {}", target.token);
    socket::open(
        &target.base,
        "/v1/relay",
        &[
            ("authorization", &auth),
            (
                needs_you_core::relay::CAN_HEADER,
                needs_you_core::relay::CAN_SCREEN,
            ),
        ],
        TICK,
    )
}

fn say(ws: &mut Socket, msg: &FromRelay) -> bool {
    ws.send(Message::text(msg.to_frame())).is_ok()
}

/// What the relay keeps while it runs.
struct Relay {
    dir: StateDir,
    task: String,
    /// The hooks and plugins waiting for a decision or choices.
    waiters: Arc<Waiters>,
    /// Every answer handled, and what was said of it: one sent again after
    /// a reconnect is never typed or handed on twice.
    handled: HashMap<String, FromRelay>,
    /// What was said of the answers handled on this connection: said once
    /// more after the next `hello`, then never again.
    to_say_again: Vec<FromRelay>,
    last_open: Instant,
    idle: Duration,
    /// The last screen read of each session's pane, and when.
    screens: HashMap<String, (Instant, Screen)>,
}

impl Relay {
    /// Whether anything of its task still needs it: an open reply in a pane
    /// here, a waiter, or a lasting rule this machine wrote for it, which
    /// the person may take back from afar.
    fn busy(&mut self) -> bool {
        if anything_open(&self.dir, &self.task)
            || self.waiters.any()
            || crate::granted::holds_any(self.dir.path(), &self.task)
        {
            self.last_open = Instant::now();
        }
        self.last_open.elapsed() < self.idle
    }

    /// What becomes of one answer: typed, taken by the agent, or why not.
    fn handle(&self, answer: &Answer) -> FromRelay {
        let answer_id = answer.answer_id.clone();
        let outcome = match (&answer.body, &answer.digest) {
            // A reply whose agent takes messages (Codex's app-server client
            // waits for one): handed on as a message, no key typed.
            (AnswerBody::Text { text }, _) if self.waiters.waits_for_message(&answer.session) => {
                match still_open(&self.dir, answer).and_then(|()| {
                    needs_you_core::answer::check(text).map_err(Failure::refused_words)
                }) {
                    Ok(_) => return self.hand(answer, &Awaits::Message),
                    Err(failure) => Err(failure),
                }
            }
            // The answer's own words first, then where it would land.
            (AnswerBody::Text { text }, _) => needs_you_core::answer::check(text)
                .map_err(Failure::refused_words)
                .and_then(|line| {
                    let pane = may_type(&self.dir, &self.task, answer)?;
                    let still_wanted = || still_open(&self.dir, answer).map_err(|f| f.reason);
                    terminal::type_line(&pane, &line, still_wanted)
                        .map_err(|why| Failure::new(NotDone::TypingStopped, why))
                        .map(|()| FromRelay::Typed {
                            answer_id: answer_id.clone(),
                        })
                }),
            (_, Some(digest)) => match may_hand(&self.dir, answer, digest) {
                Err(refusal) => Err(Failure::refused(refusal)),
                Ok(()) => return self.hand(answer, &Awaits::Request(digest.clone())),
            },
            (_, None) => Err(Failure::new(
                NotDone::NoRequest,
                "the answer names no request to answer",
            )),
        };
        outcome.unwrap_or_else(|failure| failure.of(answer_id))
    }

    /// Hands `answer` to the waiter registered for its session and `digest`:
    /// taken by the agent, or why not.
    fn hand(&self, answer: &Answer, awaits: &Awaits) -> FromRelay {
        let answer_id = answer.answer_id.clone();
        match self
            .waiters
            .hand(&answer.session, awaits, &answer.answer_id, &answer.body)
        {
            Ok(()) => FromRelay::Taken { answer_id },
            Err(afar::NotHanded::Refused(refusal)) => Failure::refused(refusal).of(answer_id),
            Err(afar::NotHanded::Failed(code, reason)) => Failure::new(code, reason).of(answer_id),
        }
    }

    /// The pane of the session's open question, as asked: checked as before
    /// typing (the question open here, of this task, the pane still the
    /// agent's), and read at most every [`SCREEN_EVERY`].
    fn screen(&mut self, ask: &ScreenAsk) -> ScreenReply {
        let request_id = ask.request_id.clone();
        let shown = self.read_screen(&ask.session);
        match shown {
            Ok(screen) => {
                let digest = screen.digest();
                let seen = ask.seen.as_deref() == Some(digest.as_str());
                ScreenReply {
                    request_id,
                    screen: (!seen).then_some(screen),
                    digest: Some(digest),
                    refused: None,
                }
            }
            Err(why) => ScreenReply {
                request_id,
                refused: Some(why),
                ..ScreenReply::default()
            },
        }
    }

    fn read_screen(&mut self, session: &str) -> Result<Screen, String> {
        if no_screen() {
            return Err("this agent was started with --no-screen".into());
        }
        let pane = recorded_pane(&self.dir, &self.task, session)
            .map_err(|f| f.reason)?
            .pane;
        self.dir
            .open_question(session)
            .map_err(|e| format!("cannot read the state directory: {e}"))?
            .ok_or("the question is no longer open in the agent")?;
        if let Some((at, screen)) = self.screens.get(session) {
            if at.elapsed() < SCREEN_EVERY {
                return Ok(screen.clone());
            }
        }
        let screen = terminal::capture(&pane)?;
        self.screens
            .retain(|_, (at, _)| at.elapsed() < SCREEN_EVERY);
        self.screens
            .insert(session.to_owned(), (Instant::now(), screen.clone()));
        Ok(screen)
    }
}

/// The relay's main loop; returns its exit code (0: always, it is detached).
pub fn run(state_dir: Option<PathBuf>) -> i32 {
    let Ok(dir) = StateDir::open(state::resolve(state_dir)) else {
        return 0;
    };
    let Some(_lock) = detach::inherited_lock() else {
        return 0;
    };
    let target = match Target::from_env() {
        Ok(t) => t,
        Err(e) => {
            dir.log(&format!("relay: {e}"));
            return 0;
        }
    };
    let task = task_key(&target);
    let waiters = match Waiters::listen(&afar::socket_path(dir.path(), &task)) {
        Ok(w) => w,
        Err(e) => {
            dir.log(&format!("relay: cannot open its socket: {e}"));
            return 0;
        }
    };
    let mut relay = Relay {
        dir,
        task,
        waiters,
        handled: HashMap::new(),
        to_say_again: Vec::new(),
        last_open: Instant::now(),
        idle: idle_limit(),
        screens: HashMap::new(),
    };
    let mut backoff = FIRST_BACKOFF;
    let mut first = true;
    let code = loop {
        if !first {
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
        first = false;
        if !relay.busy() {
            break 0;
        }
        let mut ws = match connect(&target) {
            Opened::Up(ws) => ws,
            Opened::Refused => {
                relay
                    .dir
                    .log("relay: the task credential was refused; stopping");
                break 0;
            }
            Opened::Down(e) => {
                relay.dir.log(&format!(
                    "relay: {e}; trying again in {} s",
                    backoff.as_secs()
                ));
                continue;
            }
        };
        let up = Instant::now();
        if !say(&mut ws, &FromRelay::Hello) {
            continue;
        }
        let again = std::mem::take(&mut relay.to_say_again);
        if !again.iter().all(|said| say(&mut ws, said)) {
            continue;
        }
        let served = serve(&mut ws, &mut relay);
        // A connection that lasted is no sign of trouble: the next one is
        // tried after the shortest pause. One dropped at once keeps doubling.
        if up.elapsed() >= MAX_BACKOFF {
            backoff = FIRST_BACKOFF;
        }
        match served {
            Served::Stop => {
                let _ = ws.close(None);
                break 0;
            }
            Served::Dropped => continue,
        }
    };
    let _ = std::fs::remove_file(afar::socket_path(relay.dir.path(), &relay.task));
    code
}

enum Served {
    Stop,
    Dropped,
}

fn serve(ws: &mut Socket, relay: &mut Relay) -> Served {
    loop {
        match ws.read() {
            Ok(Message::Text(text)) => {
                // A message of a kind this relay does not know: skipped.
                let answer = match serde_json::from_str(text.as_str()) {
                    Ok(ToRelay::Answer(answer)) => answer,
                    Ok(ToRelay::Screen(ask)) => {
                        let reply = FromRelay::Screen(relay.screen(&ask));
                        if !say(ws, &reply) {
                            return Served::Dropped;
                        }
                        continue;
                    }
                    Ok(ToRelay::Revoke(r)) => {
                        let done = crate::granted::revoke(
                            relay.dir.path(),
                            &relay.task,
                            &r.rule_id,
                            &r.answer_id,
                        );
                        relay
                            .dir
                            .log(&format!("relay: rule {}: {}", r.rule_id, done.note));
                        if !say(ws, &FromRelay::Revoked(done)) {
                            return Served::Dropped;
                        }
                        continue;
                    }
                    Err(_) => continue,
                };
                let received = FromRelay::Received {
                    answer_id: answer.answer_id.clone(),
                };
                if !say(ws, &received) {
                    return Served::Dropped;
                }
                // Sent again after a reconnect: it was handled already, and
                // its outcome may be what the drop lost.
                if let Some(said) = relay.handled.get(&answer.answer_id) {
                    if !say(ws, said) {
                        return Served::Dropped;
                    }
                    continue;
                }
                let msg = relay.handle(&answer);
                let sent = say(ws, &msg);
                // Bounded: past it, the oldest outcomes go all at once (the
                // waiters' spent answers still refuse a second hand-over).
                if relay.handled.len() >= HANDLED_KEPT {
                    relay.handled.clear();
                }
                relay.to_say_again.push(msg.clone());
                relay.handled.insert(answer.answer_id, msg);
                if !sent {
                    return Served::Dropped;
                }
            }
            Ok(Message::Close(frame)) => {
                // Revoked, or replaced by a newer relay of the task: stop.
                let stop = frame.is_some_and(|f| {
                    f.code == CloseCode::from(CLOSE_REVOKED)
                        || f.code == CloseCode::from(CLOSE_REPLACED)
                });
                return if stop { Served::Stop } else { Served::Dropped };
            }
            Ok(_) => {}
            Err(e) if socket::timed_out(&e) => {
                if !relay.busy() {
                    return Served::Stop;
                }
                // Keeps a quiet connection known to be alive on both sides.
                if ws.send(Message::Ping(Vec::new().into())).is_err() {
                    return Served::Dropped;
                }
            }
            Err(_) => return Served::Dropped,
        }
    }
}
