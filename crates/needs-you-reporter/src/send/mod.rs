//! Sending a report: the foreground adds it to the outbox (`outbox`)
//! and returns; one detached sender per outbox sends the reports in the order
//! they were made, retrying a server that is down or failing for a while.
//!
//! * `outbox`: the reports waiting to be sent, in order, one sender at a time.
//! * [`sealed_report`]: this machine's content key, and a report's words
//!   sealed under it in the sender, before they leave.

mod outbox;
pub mod sealed_report;

use std::collections::HashSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use needs_you_core::url::check_base_url;
use needs_you_core::Report;

use crate::detach;
use crate::error::Error;
use crate::state::{self, now_micros, StateDir};
use outbox::{Outbox, Queued};

/// One request's whole budget.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);
/// A report that could not be sent (the server down, or answering 5xx) is
/// tried again until it is this old, then given up with a line in the log.
const SEND_FOR: Duration = Duration::from_secs(60);
/// The first wait before trying a failed report again; it doubles up to
/// [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(8);
/// How many sessions' reports are sent side by side.
const LANES: usize = 8;

/// The variable that holds the task's credential.
pub const TOKEN_VAR: &str = "NEEDS_YOU_TOKEN";
/// The variable that holds the server's address.
pub const URL_VAR: &str = "NEEDS_YOU_URL";

/// Where reports go, from `NEEDS_YOU_URL` and [`TOKEN_VAR`].
pub struct Target {
    pub base: String,
    pub token: String,
}

impl Target {
    pub fn from_env() -> Result<Target, Error> {
        let url = std::env::var(URL_VAR).unwrap_or_default();
        let token = std::env::var(TOKEN_VAR).unwrap_or_default();
        // Both come from `needs-you run`, which starts the agent with them.
        if url.is_empty() {
            return Err(Error::Setup(
                "NEEDS_YOU_URL is not set: start the agent with `needs-you run -- AGENT`".into(),
            ));
        }
        if token.is_empty() {
            return Err(Error::Setup(
                "NEEDS_YOU_TOKEN is not set: start the agent with `needs-you run -- AGENT`".into(),
            ));
        }
        Ok(Target {
            base: check_base_url(&url).map_err(|e| Error::Setup(format!("NEEDS_YOU_URL: {e}")))?,
            token,
        })
    }
}

/// Adds the report to the outbox of its server and credential.
pub fn queue(report: &Report, state_dir: &Path, target: &Target) -> Result<(), Error> {
    let body = serde_json::to_vec(report)
        .map_err(|e| Error::State(format!("cannot encode the report: {e}")))?;
    Outbox::new(state_dir, &target.base, &target.token)
        .add(report.seq(), report.session(), &body)
        .map_err(|e| Error::State(format!("cannot queue the report: {e}")))
}

/// Starts a sender for the outbox unless one is already draining it, handing
/// it the outbox's lock as its stdin. Returns without waiting for anything:
/// the sender has no stdout or stderr of ours either, since a CLI waits for
/// its hook's pipes to close.
pub fn ensure_sender(state_dir: &Path, target: &Target) -> Result<(), Error> {
    let outbox = Outbox::new(state_dir, &target.base, &target.token);
    let lock = match outbox.try_lock() {
        Ok(Some(lock)) => lock,
        // A sender is draining this outbox: it sends this report too.
        Ok(None) => return Ok(()),
        Err(e) => return Err(Error::Helper(format!("cannot lock the outbox: {e}"))),
    };
    let args = [
        OsStr::new("__send"),
        OsStr::new("--state-dir"),
        state_dir.as_os_str(),
    ];
    detach::spawn(args, lock).map_err(|e| Error::Helper(format!("cannot start the sender: {e}")))
}

/// `report-prompt __send`: the detached sender. Its stdin is the outbox's
/// lock, taken by the hook that started it. Its failures go to the state
/// directory's log, since nobody reads its stderr.
pub fn run_sender(state_dir: Option<PathBuf>) -> i32 {
    let Ok(dir) = StateDir::open(state::resolve(state_dir)) else {
        return 0;
    };
    let target = match Target::from_env() {
        Ok(t) => t,
        Err(e) => {
            dir.log(&e.to_string());
            return 0;
        }
    };
    let outbox = Outbox::new(dir.path(), &target.base, &target.token);
    let Some(lock) = detach::inherited_lock() else {
        return 0;
    };
    let window = send_window();
    let agent = agent();
    loop {
        drain(&outbox, &agent, &target, &dir, window);
        let _ = lock.unlock();
        // A report added after the last look but before the unlock found the
        // lock taken and left: look once more.
        if outbox.is_empty() || lock.try_lock().is_err() {
            break;
        }
    }
    0
}

/// Sends every queued report with [`LANES`] threads: each takes the oldest
/// report of a session that no other lane is sending, so a session's reports
/// go out in order while a slow answer for one session holds up no other.
fn drain(outbox: &Outbox, agent: &ureq::Agent, target: &Target, dir: &StateDir, window: Duration) {
    let busy = Mutex::new(HashSet::new());
    // Signalled when a lane finishes a report, which may free the next one.
    let freed = Condvar::new();
    std::thread::scope(|scope| {
        for _ in 0..LANES {
            scope.spawn(|| loop {
                let mut sessions = busy.lock().unwrap_or_else(|e| e.into_inner());
                let next = loop {
                    match outbox.next_free(&sessions) {
                        Ok(Some(q)) => break q,
                        // What waits, waits behind busy lanes: wait for one to
                        // finish (or, now and then, for a new report).
                        Ok(None) if !sessions.is_empty() => {
                            sessions = freed
                                .wait_timeout(sessions, Duration::from_millis(100))
                                .unwrap_or_else(|e| e.into_inner())
                                .0;
                        }
                        _ => return,
                    }
                };
                sessions.insert(next.session.clone());
                drop(sessions);
                send_one(agent, target, &next, dir, window);
                next.remove();
                busy.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&next.session);
                freed.notify_all();
            });
        }
    });
}

/// How long a report is retried: `NEEDS_YOU_SEND_FOR_S` seconds (1 to 3600),
/// else [`SEND_FOR`].
fn send_window() -> Duration {
    std::env::var("NEEDS_YOU_SEND_FOR_S")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| (1..=3600).contains(s))
        .map_or(SEND_FOR, Duration::from_secs)
}

/// Sends one queued report: done on a 2xx, dropped (and logged) on a 4xx,
/// which would only be refused again, and retried with backoff on a 5xx, a
/// "try later" (408, 425, 429) or no answer until it is `window` old, or this
/// sender has tried it for `window` (the report's age comes from its `seq`,
/// which a clock set back could put in the future).
fn send_one(agent: &ureq::Agent, target: &Target, q: &Queued, dir: &StateDir, window: Duration) {
    let body = match q.read() {
        Ok(b) => b,
        Err(e) => return dir.log(&format!("cannot read a queued report: {e}")),
    };
    // Sealed here, once, off the agent's path: never sent unsealed by a
    // machine that holds the key.
    let body = match sealed_report::sealed_body(body) {
        Ok(b) => b,
        Err(e) => return dir.log(&format!("kept a report back: {e}")),
    };
    let mut backoff = FIRST_BACKOFF;
    let mut logged = false;
    let first_try = std::time::Instant::now();
    loop {
        let failure = match post_report(agent, target, &body) {
            Ok(status) if (200..300).contains(&status) => return,
            Ok(status) if status < 500 && !matches!(status, 408 | 425 | 429) => {
                return dir.log(&format!("the server refused a report: HTTP {status}"));
            }
            Ok(status) => format!("the server failed a report: HTTP {status}"),
            Err(e) => format!("could not reach {}: {e}", target.base),
        };
        let age = Duration::from_micros(now_micros().saturating_sub(q.made_micros))
            .max(first_try.elapsed());
        if age + backoff > window {
            return dir.log(&format!(
                "{failure}; gave up on the report after {} s",
                age.as_secs()
            ));
        }
        if !logged {
            dir.log(&format!(
                "{failure}; trying again for up to {} s",
                window.as_secs()
            ));
            logged = true;
        }
        std::thread::sleep(backoff);
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(REQUEST_TIMEOUT))
        .http_status_as_error(false)
        // A redirected POST would arrive as a GET somewhere else and its
        // report be lost as "delivered": a 3xx is a refusal, in the log.
        .max_redirects(0)
        .user_agent(concat!("report-prompt/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

pub fn post_report(agent: &ureq::Agent, target: &Target, body: &[u8]) -> Result<u16, Error> {
    let resp = agent
        .post(format!("{}/v1/reports", target.base))
        .header("authorization", format!("Bearer {}", target.token))
        .header("content-type", "application/json")
        .send(body)
        .map_err(|e| Error::Server(e.to_string()))?;
    Ok(resp.status().as_u16())
}
