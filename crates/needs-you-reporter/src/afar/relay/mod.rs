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
//! (Show terminal, `Screens::reply`): only a pane recorded for an open
//! question of its own task, only while that pane still runs the agent,
//! read at most every [`SCREEN_EVERY`] (a faster reader gets the same
//! screen again), never with `NEEDS_YOU_NO_SCREEN` set, and always sealed
//! under the owner's content key (none: no screen).
//!
//! A dropped connection is made again after a pause (1 s, doubling to 30 s
//! while connections keep failing or dropping at once); answers queued
//! meanwhile come on the `hello`. An answer id already handled is never typed
//! twice. What became of the answers it handled on one connection is said
//! once more after the next `hello`, in case the drop lost it: the Worker
//! never sends an answer again once its question closed, and the close that
//! typing or taking an answer causes may well come first. A close that
//! says the task was revoked, or that a newer relay of the task took over
//! (`needs_you_core::relay_messages`'s close codes), or a refused credential, ends it;
//! so does a machine where nothing of its task has been open for
//! `NEEDS_YOU_RELAY_IDLE_S` (600 s).
//! Its failures go to the state directory's log.
//!
//! * `admit`: whether an answer may go on, checked again before each key and decision.
//! * `screens`: the pane a device asks to see, read, cached and sealed.
//! * `panes`: where an open question's pane is recorded on this machine.

mod admit;
mod panes;
mod screens;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use needs_you_core::afar::{AnswerBody, Refusal};
use needs_you_core::relay_messages::{
    Answer, FromRelay, NotDone, Revocation, RevokeOutcome, Revoked, ScreenAsk, ScreenReply,
    ToRelay, CLOSE_REPLACED, CLOSE_REVOKED,
};
use needs_you_core::signed::{DeviceList, Envelope, Revoking, Signed};
use needs_you_trust::admission::{self, Knows};
use needs_you_trust::verify::{newest_list, verify_as};
use serde::de::DeserializeOwned;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::Message;

use crate::afar::waiters::{self, Awaits, Waiters};
use crate::detach;
use crate::error::Error;
use crate::owner;
use crate::send::sealed_report;
use crate::send::Target;
use crate::socket::{self, Opened, Socket};
use crate::state::{self, StateDir};
use crate::terminal;
pub use admit::no_screen;
use admit::{may_hand, may_type, still_open, Failure};
use panes::anything_open;
pub use panes::{forget_pane, record_pane, task_key, PaneRecord};
use screens::Screens;
pub use screens::SCREEN_EVERY;

/// How long a read waits before the relay looks around (idle, ping).
const TICK: Duration = Duration::from_secs(20);
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The most outcomes of answers kept, for an answer the Worker sends again:
/// an answer is handled once in a while, so these are the latest hours'. Past it they are all
/// forgotten at once; the waiters' own list of spent answers keeps a
/// decision from being taken twice beyond them.
const HANDLED_KEPT: usize = 100;
/// The ids of the signed statements this machine has acted on, so that none
/// is taken twice, whatever answer id the server gives it again.
const SPENT_STATEMENTS: &str = "spent-statements";

/// Where the owner's newest device list this machine has seen is kept, as
/// its envelope: `$XDG_STATE_HOME/needs-you` (else `~/.local/state/needs-you`),
/// which outlives a reboot, unlike the state directory (often a tmpfs): a
/// server must not bring back a revoked device by offering an older list to
/// a machine that forgot the newer one. The state directory only when there
/// is no home.
fn kept_list_path(state_dir: &Path, owner: &str) -> PathBuf {
    use std::os::unix::fs::DirBuilderExt;
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = var("XDG_STATE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".local/state")))
        .map(|d| d.join("needs-you"))
        .filter(|d| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(d)
                .is_ok()
        })
        .unwrap_or_else(|| state_dir.to_owned());
    let tag: String = owner
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(16)
        .collect();
    dir.join(format!("device-list-{tag}.json"))
}

/// Starts the relay for this server and credential unless one runs.
pub fn ensure_relay(dir: &Path, target: &Target) -> Result<(), Error> {
    let lock = match detach::try_lock(&dir.join(format!("relay-{}.lock", task_key(target)))) {
        Ok(Some(lock)) => lock,
        Ok(None) => return Ok(()),
        Err(e) => return Err(Error::Helper(format!("cannot lock the relay: {e}"))),
    };
    let args = [
        std::ffi::OsStr::new("__relay"),
        std::ffi::OsStr::new("--state-dir"),
        dir.as_os_str(),
    ];
    detach::spawn(args, lock).map_err(|e| Error::Helper(format!("cannot start the relay: {e}")))
}

fn idle_limit() -> Duration {
    let s = std::env::var("NEEDS_YOU_RELAY_IDLE_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    Duration::from_secs(s)
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
                needs_you_core::relay_messages::CAN_HEADER,
                needs_you_core::relay_messages::CAN_SCREEN,
            ),
        ],
        TICK,
    )
}

fn say(ws: &mut Socket, msg: &FromRelay) -> bool {
    ws.send(Message::text(msg.to_frame())).is_ok()
}

/// Now, in milliseconds since the epoch: what statements' lives are
/// counted in.
fn now_ms() -> i64 {
    (state::now_micros() / 1000) as i64
}

/// What the relay keeps while it runs.
struct Relay {
    dir: StateDir,
    task: String,
    /// The owner whose signed answers alone this machine takes
    /// ([`owner::pinned_owner`]); on a machine logged in under no owner
    /// key, none, and it takes no answer at all.
    owner: Option<String>,
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
    screens: Screens,
}

impl Relay {
    /// Whether anything of its task still needs it: an open reply in a pane
    /// here, a waiter, or a lasting rule this machine wrote for it, which
    /// the person may take back from afar.
    fn busy(&mut self) -> bool {
        if anything_open(&self.dir, &self.task)
            || self.waiters.any()
            || crate::afar::granted::holds_any(self.dir.path(), &self.task)
        {
            self.last_open = Instant::now();
        }
        self.last_open.elapsed() < self.idle
    }

    /// The answer to act on: what this machine knows read here (its content
    /// key, the session's open question, the newest device list), the answer
    /// admitted against it ([`admission::admit`]), and its statement's id
    /// spent here once and for all. Every answer passes here before anything
    /// is typed or handed on; a machine that pinned no owner takes none.
    fn trusted(&mut self, answer: &Answer) -> Result<Answer, Failure> {
        let keys = sealed_report::held_keys()
            .map_err(|e| Failure::new(NotDone::StateUnreadable, e.to_string()))?;
        // By the frame's session: the statement must name that one too.
        let asked = self
            .dir
            .open_question(&answer.session)
            .map_err(|e| {
                Failure::new(
                    NotDone::StateUnreadable,
                    format!("cannot read the state directory: {e}"),
                )
            })?
            .map(|open| open.asked(&answer.session));
        let owner = self.owner.as_deref();
        let devices = owner.and_then(|o| self.newest_list(o, answer.devices.as_deref()));
        let knows = Knows {
            owner,
            devices: devices.as_ref(),
            now_ms: now_ms(),
            keys: keys.as_ref(),
            asked: asked.as_ref(),
        };
        let admitted = admission::admit(answer, &knows).map_err(Failure::refused)?;
        self.spend(&admitted.statement_id)
            .map_err(Failure::refused)?;
        Ok(admitted.answer)
    }

    /// What `signed` says, checked ([`verify_as`]) against the owner this
    /// machine pinned and the newest device list it has seen (`offered`
    /// among them): for a taking back, as [`admission::admit`] does for an
    /// answer.
    fn verified<T: Signed + DeserializeOwned>(
        &self,
        signed: Option<&Envelope>,
        offered: Option<&Envelope>,
    ) -> Result<T, Refusal> {
        let owner = self.owner.as_deref().ok_or(Refusal::NotPinned)?;
        let devices = self.newest_list(owner, offered);
        verify_as(owner, signed, devices.as_ref(), now_ms())
    }

    /// Spends a statement's `id` here once and for all: any answer or taking
    /// back signed with it is refused after.
    fn spend(&self, id: &str) -> Result<(), Refusal> {
        waiters::spend(&self.dir.path().join(SPENT_STATEMENTS), id)
            .then_some(())
            .ok_or(Refusal::Spent)
    }

    /// Takes back the rule `r` names, if the owner's device signed its
    /// taking back ([`verify_as`], as for an answer): the rule this machine
    /// recorded for the answer the statement names, whatever the frame says,
    /// once. Refused, the rule stays, and the note says why.
    fn take_back(&mut self, r: &Revocation) -> Revoked {
        let refused = |refusal: Refusal| Revoked {
            rule_id: r.rule_id.clone(),
            outcome: RevokeOutcome::Failed,
            note: format!("refused ({}): {}", refusal.code(), refusal.message()),
        };
        let signed: Revoking = match self.verified(r.signed.as_deref(), r.devices.as_deref()) {
            Ok(s) => s,
            Err(refusal) => return refused(refusal),
        };
        if signed.rule_id != r.rule_id {
            return refused(Refusal::NotThisRequest);
        }
        if let Err(refusal) = self.spend(&signed.id) {
            return refused(refusal);
        }
        crate::afar::granted::revoke(self.dir.path(), &self.task, &r.rule_id, &signed.answer_id)
    }

    /// The owner's newest device list this machine has seen: the one kept
    /// ([`kept_list_path`]), or `offered` once it is the owner's and newer,
    /// which is then kept in its place. Read from the file at every answer,
    /// not held in memory: every relay of the machine (one per task) keeps
    /// it there, and a list one of them saw is never undone for another by
    /// an older one the server sends it.
    fn newest_list(&self, owner: &str, offered: Option<&Envelope>) -> Option<DeviceList> {
        let path = kept_list_path(self.dir.path(), owner);
        let kept = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Envelope>(&t).ok())
            .and_then(|e| newest_list(owner, None, Some(&e)));
        let kept_version = kept.as_ref().map(|l| l.version);
        let newest = newest_list(owner, kept, offered)?;
        if let Some(envelope) = offered.filter(|_| Some(newest.version) != kept_version) {
            let text = serde_json::to_string(envelope).unwrap_or_default();
            if let Err(e) = state::write_private(&path, text) {
                self.dir
                    .log(&format!("relay: cannot keep the owner's device list: {e}"));
            }
        }
        Some(newest)
    }

    /// What becomes of one answer: typed, taken by the agent, or why not.
    fn handle(&mut self, answer: &Answer) -> FromRelay {
        let answer = match self.trusted(answer) {
            Ok(a) => a,
            Err(failure) => return failure.of(answer.answer_id.clone()),
        };
        let answer = &answer;
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
                    let still_wanted =
                        || still_open(&self.dir, answer).map_err(|f| Error::Terminal(f.reason));
                    terminal::type_line(&pane, &line, still_wanted)
                        .map_err(|why| Failure::new(NotDone::TypingStopped, why.to_string()))
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
            Err(waiters::NotHanded::Refused(refusal)) => Failure::refused(refusal).of(answer_id),
            Err(waiters::NotHanded::Failed(code, reason)) => {
                Failure::new(code, reason).of(answer_id)
            }
        }
    }

    /// The pane of the session's open question, as asked ([`Screens::reply`]).
    fn screen(&mut self, ask: &ScreenAsk) -> ScreenReply {
        self.screens
            .reply(&self.dir, &self.task, self.owner.as_deref(), ask)
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
    let waiters = match Waiters::listen(&waiters::socket_path(dir.path(), &task)) {
        Ok(w) => w,
        Err(e) => {
            dir.log(&format!("relay: cannot open its socket: {e}"));
            return 0;
        }
    };
    let mut relay = Relay {
        dir,
        task,
        owner: owner::pinned_owner(),
        waiters,
        handled: HashMap::new(),
        to_say_again: Vec::new(),
        last_open: Instant::now(),
        idle: idle_limit(),
        screens: Screens::default(),
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
    let _ = std::fs::remove_file(waiters::socket_path(relay.dir.path(), &relay.task));
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
                        let done = relay.take_back(&r);
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
