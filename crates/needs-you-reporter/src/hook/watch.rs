//! Watching a session's transcript while one of its dialogs is open.
//!
//! Claude Code fires no hook at all when a person denies a permission or
//! dismisses a question with Esc: without more, the question would stay open
//! on the server and ring the phone 15 seconds later. It does write to the
//! session's transcript (whose path every hook payload names): a rejected
//! tool result, then "[Request interrupted by user for tool use]". So when a
//! hook opens a dialog or a permission, it starts a watcher, detached like the
//! sender, that reads what the CLI appends to the transcript from where it was
//! at the open, and closes the question (`interrupted`) at the first entry that
//! means the dialog is gone ([`transcript_line_ends_dialog`]). A Codex
//! subagent's approval denied with Esc is the same: no hook, and
//! `turn_aborted` in the subagent's own rollout.
//!
//! One watcher per session and transcript: the hook that starts it hands
//! it the watch lock as its stdin, and a later open finds the lock taken and
//! leaves the watching to it. The watcher follows the session's open
//! question while it is one of its transcript: when a new one opens, it goes
//! on from the transcript position recorded with it; when none is open, a
//! reply is, or one of another transcript (a Codex subagent's rollout), it
//! exits; after [`WATCH_FOR`] it gives up.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use needs_you_core::classify::{transcript_line_ends_dialog, transcript_watched};
use needs_you_core::{Cli, CloseReason};
use serde_json::Value;

use crate::detach;
use crate::questions;
use crate::state::{self, session_key, transcript_key, StateDir};

/// How often the transcript is looked at.
const POLL: Duration = Duration::from_millis(200);
/// The longest a watcher lives: nobody leaves a dialog open longer.
const WATCH_FOR: Duration = Duration::from_secs(4 * 3600);
/// The most of a transcript read in one look; a larger jump is skipped.
const MAX_READ: u64 = 4 * 1024 * 1024;

/// The transcript a hook event names, and its length now; `None` for a
/// dialog that always ends in a hook (all but Claude Code's dialogs and a
/// Codex subagent's approvals: [`transcript_watched`]), or an event
/// without a transcript.
pub fn transcript_of(cli: Cli, event: &Value) -> Option<(PathBuf, u64)> {
    if !transcript_watched(cli, event) {
        return None;
    }
    let path = match event.get("transcript_path").and_then(Value::as_str) {
        Some(p) => PathBuf::from(p),
        // A notification that names no transcript (Copilot's): its CLI
        // knows where its session's is.
        None => crate::clis::of(cli).transcript_of_session(event)?,
    };
    let len = fs::metadata(&path).ok()?.len();
    Some((path, len))
}

/// Starts the session's watcher unless one is running. A failure only costs
/// the watching: the question itself was reported.
pub fn start(dir: &StateDir, cli: Cli, session: &str, transcript: &Path) {
    // One watcher per session and transcript: a Codex subagent's dialog is
    // in its own rollout.
    let lock_path = dir.path().join(format!(
        "watch-{}-{}.lock",
        session_key(session),
        transcript_key(transcript)
    ));
    let Ok(Some(lock)) = detach::try_lock(&lock_path) else {
        return; // a watcher holds it, or the lock cannot be had
    };
    let args = [
        OsStr::new("__watch"),
        OsStr::new("--cli"),
        OsStr::new(cli.as_str()),
        OsStr::new("--state-dir"),
        dir.path().as_os_str(),
        OsStr::new("--session"),
        OsStr::new(session),
        OsStr::new("--transcript"),
        transcript.as_os_str(),
    ];
    if let Err(e) = detach::spawn(args, lock) {
        dir.log(&format!("cannot start the transcript watcher: {e}"));
    }
}

/// `report-prompt __watch`: the watcher. Its stdin is the session's watch
/// lock, taken by the hook that started it.
pub fn run(cli: Cli, state_dir: Option<PathBuf>, session: &str, transcript: &Path) -> i32 {
    let Ok(dir) = StateDir::open(state::resolve(state_dir)) else {
        return 0;
    };
    let Some(lock) = detach::inherited_lock() else {
        return 0;
    };
    let mine = Some(transcript_key(transcript));
    let started = Instant::now();
    let mut watching: Option<(u64, u64)> = None; // (the open's seq, transcript position)
    let mut partial = Vec::new();
    while started.elapsed() < WATCH_FOR {
        let open = match dir.open_question(session) {
            Ok(Some(q)) if q.kind.notifies() && q.transcript == mine => q,
            // Closed, a reply, or a question of another transcript (or of
            // none): not this watcher's.
            _ => break,
        };
        let position = match watching {
            Some((seq, at)) if seq == open.seq => at,
            // A new question opened: go on from where the transcript was then.
            _ => {
                partial.clear();
                open.transcript_at.unwrap_or(0)
            }
        };
        match read_from(transcript, position, &mut partial) {
            Ok((lines, next)) => {
                if lines.iter().any(|l| transcript_line_ends_dialog(cli, l)) {
                    // Only the question being watched: a newer one may have
                    // opened since the last look.
                    let reason = CloseReason::Interrupted;
                    let closed = questions::close(&dir, cli, session, reason, Some(open.seq));
                    if let Err(e) = closed {
                        dir.log(&format!("the transcript watcher could not close: {e}"));
                    }
                    break;
                }
                watching = Some((open.seq, next));
            }
            Err(e) => {
                dir.log(&format!("the transcript watcher stopped: {e}"));
                break;
            }
        }
        std::thread::sleep(POLL);
    }
    let _ = lock.unlock();
    0
}

/// The complete lines appended after `position`, and the position after the
/// last of them; a line still being written waits in `partial`.
fn read_from(
    path: &Path,
    position: u64,
    partial: &mut Vec<u8>,
) -> std::io::Result<(Vec<String>, u64)> {
    let mut f = File::open(path)?;
    let len = f.metadata()?.len();
    if len <= position {
        return Ok((Vec::new(), position.min(len)));
    }
    let start = position.max(len.saturating_sub(MAX_READ));
    f.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    f.take(len - start).read_to_end(&mut buf)?;
    let next = start + buf.len() as u64;
    partial.extend_from_slice(&buf);
    let mut lines = Vec::new();
    while let Some(end) = partial.iter().position(|&b| b == b'\n') {
        let line: Vec<u8> = partial.drain(..=end).collect();
        lines.push(String::from_utf8_lossy(&line).trim().to_owned());
    }
    Ok((lines, next))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn only_complete_lines_after_the_position_are_read() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("t.jsonl");
        fs::write(&path, "old line\n").unwrap();
        let start = fs::metadata(&path).unwrap().len();
        let mut partial = Vec::new();
        let (lines, at) = read_from(&path, start, &mut partial).unwrap();
        assert!(lines.is_empty());
        assert_eq!(at, start);
        let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"first\nsecond, half").unwrap();
        let (lines, at) = read_from(&path, at, &mut partial).unwrap();
        assert_eq!(lines, ["first"]);
        f.write_all(b" done\n").unwrap();
        let (lines, _) = read_from(&path, at, &mut partial).unwrap();
        assert_eq!(lines, ["second, half done"]);
    }
}
