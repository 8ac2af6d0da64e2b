//! The end of a CLI's transcript, searched from its last line back: where a
//! hook finds what its event leaves out (a Claude Code plan's file, a Gemini
//! CLI reply). The file is opened never through a symbolic link and never
//! waiting on it, and only its last MiB is read: the hook runs inside the
//! agent's loop.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// How much of a transcript's end is searched: what a hook looks for is in
/// the last round, a few KiB.
const TAIL: u64 = 1024 * 1024;

/// Opens a regular file to read, never through a symbolic link and never
/// waiting on it: a FIFO under the file's name would otherwise hold the
/// hook (and so the agent) until someone wrote to it.
pub fn open_plain(path: &Path) -> Option<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    f.metadata().ok()?.is_file().then_some(f)
}

/// What `read` finds in the last line of the transcript's end that it reads
/// as something, searching from the end; a line the tail cut at its start
/// is left out.
pub fn last_found<T>(path: &Path, read: impl FnMut(&str) -> Option<T>) -> Option<T> {
    let mut f = open_plain(path)?;
    let len = f.metadata().ok()?.len();
    let start = len.saturating_sub(TAIL);
    f.seek(SeekFrom::Start(start)).ok()?;
    let mut buf = Vec::new();
    f.take(len - start).read_to_end(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf);
    let mut lines = text.lines();
    if start > 0 {
        lines.next();
    }
    lines.rev().map(str::trim).find_map(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_line_found_wins_and_a_link_or_a_fifo_is_not_read() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("t.jsonl");
        std::fs::write(&path, "a 1\nb 2\na 3\nb 4\n").unwrap();
        let a = |l: &str| l.strip_prefix("a ").map(str::to_owned);
        assert_eq!(last_found(&path, a).as_deref(), Some("3"));
        assert_eq!(
            last_found(&path, |l| l.strip_prefix("c ").map(str::to_owned)),
            None
        );
        let link = t.path().join("link.jsonl");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(last_found(&link, a), None);
        let fifo = t.path().join("fifo.jsonl");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(last_found(&fifo, a), None);
    }
}
