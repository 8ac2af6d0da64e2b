//! Whether the dialog a waiting hook holds was answered in its terminal.
//!
//! Claude Code does not end a `PermissionRequest` hook when the person answers
//! its dialog at the terminal: the hook would wait on, for an answer from afar
//! that could only land on nothing. Claude Code does write the tool's result
//! to the session's transcript then. So the hook follows the transcript:
//! it finds the model's use of its tool (the one whose digest is its own),
//! and once such a use, unanswered when the hook started or written since,
//! has its result, the dialog is over. An earlier run of the same request,
//! already answered, says nothing.
//!
//! It reads the transcript only when the kernel says the file changed
//! (inotify): a waiting hook wakes up for nothing else, however long the
//! person takes.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use needs_you_core::classify::{transcript_tool_events, ToolEvent};

/// How much of the transcript before the hook started is read: the model's
/// use of the tool was written just before the dialog opened.
const TAIL: u64 = 1024 * 1024;
/// The most read in one go after a change.
const MAX_READ: u64 = 4 * 1024 * 1024;

/// A transcript followed for the end of the uses of one tool request.
pub struct AnsweredThere {
    file: File,
    pos: u64,
    partial: Vec<u8>,
    inotify: OwnedFd,
    digest: String,
    /// Uses of the request without a result yet.
    open: Vec<String>,
    /// Whether one of those has ended since the hook started.
    ended: bool,
}

impl AnsweredThere {
    /// Follows `transcript` for the request of `digest`; `None` if it cannot
    /// be watched (the hook then waits without it).
    pub fn follow(transcript: &Path, digest: &str) -> Option<AnsweredThere> {
        // SAFETY: plain system calls; the descriptor is owned at once.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if fd < 0 {
            return None;
        }
        let inotify = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut path = transcript.as_os_str().as_bytes().to_vec();
        path.push(0);
        let watch = unsafe {
            libc::inotify_add_watch(
                fd,
                path.as_ptr().cast(),
                libc::IN_MODIFY | libc::IN_CLOSE_WRITE,
            )
        };
        if watch < 0 {
            return None;
        }
        let file = File::open(transcript).ok()?;
        let len = file.metadata().ok()?.len();
        let mut me = AnsweredThere {
            file,
            pos: len.saturating_sub(TAIL),
            partial: Vec::new(),
            inotify,
            digest: digest.to_owned(),
            open: Vec::new(),
            ended: false,
        };
        // Mid-line after a cut: the first line read is dropped. What ended
        // before the hook started is an earlier dialog's.
        let cut = me.pos > 0;
        me.read_new(cut);
        me.ended = false;
        Some(me)
    }

    fn is_over(&self) -> bool {
        self.ended && self.open.is_empty()
    }

    fn read_new(&mut self, drop_first: bool) {
        if self.file.seek(SeekFrom::Start(self.pos)).is_err() {
            return;
        }
        let mut chunk = Vec::new();
        let Ok(n) = (&self.file).take(MAX_READ).read_to_end(&mut chunk) else {
            return;
        };
        self.pos += n as u64;
        self.partial.extend_from_slice(&chunk);
        let Some(last) = self.partial.iter().rposition(|&b| b == b'\n') else {
            return;
        };
        let complete: Vec<u8> = self.partial.drain(..=last).collect();
        let mut lines = complete.split(|&b| b == b'\n');
        if drop_first {
            lines.next();
        }
        for line in lines {
            let Ok(line) = std::str::from_utf8(line) else {
                continue;
            };
            for event in transcript_tool_events(line) {
                match event {
                    ToolEvent::Used { id, digest } if digest == self.digest => {
                        self.open.push(id);
                    }
                    ToolEvent::Ended { id } if self.open.contains(&id) => {
                        self.open.retain(|o| o != &id);
                        self.ended = true;
                    }
                    ToolEvent::Ended { .. } => {}
                    ToolEvent::Used { .. } => {}
                }
            }
        }
    }
}

impl crate::afar::waiters::DialogEnd for AnsweredThere {
    /// What to wait on: readable when the transcript changed.
    fn fd(&self) -> RawFd {
        self.inotify.as_raw_fd()
    }

    /// After [`AnsweredThere::fd`] was readable: whether the dialog is over.
    fn over(&mut self) -> bool {
        let mut events = [0u8; 4096];
        // SAFETY: reads into a buffer of the length given.
        while unsafe { libc::read(self.fd(), events.as_mut_ptr().cast(), events.len()) } > 0 {}
        self.read_new(false);
        self.is_over()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::afar::waiters::DialogEnd;
    use serde_json::json;
    use std::io::Write;

    fn line(v: serde_json::Value) -> String {
        format!("{v}\n")
    }

    #[test]
    fn a_dialog_is_over_once_its_tool_use_has_a_result_and_not_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let input = json!({"command": "make"});
        let digest = needs_you_core::afar::digest("Bash", &input);
        let use_of = |id: &str| {
            line(json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": id, "name": "Bash", "input": input}]}}))
        };
        let result_of = |id: &str| {
            line(json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": id}]}}))
        };
        // An earlier run of the same command, ended; then this dialog's use.
        let mut f = File::create(&path).unwrap();
        write!(
            f,
            "{}{}{}",
            use_of("toolu_0"),
            result_of("toolu_0"),
            use_of("toolu_1")
        )
        .unwrap();
        let mut there = AnsweredThere::follow(&path, &digest).unwrap();
        assert!(!there.is_over());
        // Another tool's result, and half a line: not over.
        write!(f, "{}", result_of("toolu_other")).unwrap();
        let end = result_of("toolu_1");
        let (a, b) = end.split_at(10);
        write!(f, "{a}").unwrap();
        assert!(!there.over());
        write!(f, "{b}").unwrap();
        assert!(there.over());
    }

    #[test]
    fn a_use_written_after_the_hook_started_counts_and_older_ended_ones_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let input = json!({"questions": [{"question": "Which region?"}]});
        let digest = needs_you_core::afar::digest("AskUserQuestion", &input);
        let use_of = |id: &str| {
            line(json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": id, "name": "AskUserQuestion", "input": input}]}}))
        };
        let result_of = |id: &str| {
            line(json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": id}]}}))
        };
        // The same dialog asked and dismissed before; this one not written yet.
        let mut f = File::create(&path).unwrap();
        write!(f, "{}{}", use_of("toolu_old"), result_of("toolu_old")).unwrap();
        let mut there = AnsweredThere::follow(&path, &digest).unwrap();
        writeln!(f, r#"{{"type":"system"}}"#).unwrap();
        assert!(!there.over(), "an unrelated line");
        write!(f, "{}", use_of("toolu_new")).unwrap();
        assert!(!there.over());
        write!(f, "{}", result_of("toolu_new")).unwrap();
        assert!(there.over());
    }

    #[test]
    fn a_change_wakes_the_descriptor() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut f = File::create(&path).unwrap();
        let there = AnsweredThere::follow(&path, "x").unwrap();
        let mut fds = [libc::pollfd {
            fd: there.fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        assert_eq!(
            unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) },
            0,
            "nothing yet"
        );
        writeln!(f, "{{}}").unwrap();
        assert_eq!(unsafe { libc::poll(fds.as_mut_ptr(), 1, 1000) }, 1);
    }
}
