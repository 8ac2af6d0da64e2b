//! Hook mode: read one event, decide, record the state, hand off the request.
//!
//! Every path ends with exit code 0 and nothing on stdout; a failure is one
//! line on stderr. The order matters for cost: closing events while nothing is
//! open for the session stop after one lock and one `exists`, before any
//! environment check or process spawn.

use std::io::Read;
use std::path::PathBuf;

use needs_you_core::{classify, Cli, Decision, Report};
use serde_json::Value;

use crate::send;
use crate::state::{self, StateDir};

/// The most of stdin we read: hook payloads can carry whole tool outputs.
const MAX_EVENT_BYTES: u64 = 16 * 1024 * 1024;

/// Reads and discards stdin, so the CLI never writes into a closed pipe.
pub fn drain_stdin() {
    let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
}

fn read_event() -> Result<Value, String> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_EVENT_BYTES)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    drain_stdin();
    if buf.iter().all(u8::is_ascii_whitespace) {
        return Err("no event on stdin".into());
    }
    serde_json::from_slice(&buf).map_err(|e| format!("stdin is not a JSON event: {e}"))
}

pub fn run(cli: Cli, state_dir: Option<PathBuf>) {
    if let Err(msg) = decide_and_hand_off(cli, state_dir) {
        eprintln!("report-prompt: {msg}");
    }
}

fn decide_and_hand_off(cli: Cli, state_dir: Option<PathBuf>) -> Result<(), String> {
    let event = read_event()?;
    let classified = classify(cli, &event);
    if let Decision::Ignore { .. } = classified.decision {
        return Ok(());
    }
    let session = classified
        .session
        .ok_or_else(|| format!("the {cli} event has no session id"))?;
    let dir = StateDir::open(state::resolve(state_dir)).map_err(state_error)?;
    // The report is queued while the state is locked, so reports are queued
    // in the order of their `seq` even when hooks of one session race.
    let queue = |target: &send::Target, seq: u64| {
        let report = Report::from_decision(cli, session.clone(), seq, classified.decision.clone())
            .expect("an ignored event was returned above");
        send::queue(&report, dir.path(), target)
    };
    let target = match &classified.decision {
        Decision::Open { .. } => {
            // Check the set-up before marking anything open: a marker with no
            // server behind it would only make every closing hook slower.
            let target = send::Target::from_env()?;
            dir.record_open(&session, |seq| queue(&target, seq))
                .map_err(state_error)??;
            target
        }
        Decision::Close { .. } => {
            let queued = dir
                .record_close(&session, |seq| {
                    let target = send::Target::from_env()?;
                    queue(&target, seq).map(|()| target)
                })
                .map_err(state_error)?;
            match queued {
                // Nothing open here for this session: nothing to tell the server.
                None => return Ok(()),
                Some(target) => target?,
            }
        }
        Decision::Ignore { .. } => return Ok(()),
    };
    // The sender reads the environment again; the checks above keep a set-up
    // error on the hook's stderr, where a person can see it.
    send::ensure_sender(dir.path(), &target)
}

fn state_error(e: std::io::Error) -> String {
    format!("state directory: {e}")
}

/// `report-prompt classify`: the decision as one JSON object on stdout.
pub fn classify_stdin(cli: Cli) -> i32 {
    match read_event() {
        Ok(event) => {
            let out = serde_json::to_string(&classify(cli, &event)).expect("a decision serializes");
            println!("{out}");
            0
        }
        Err(msg) => {
            eprintln!("report-prompt: {msg}");
            1
        }
    }
}
