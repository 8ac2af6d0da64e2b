//! Detached helpers that own a lock: the sender of an outbox and the watcher
//! of a session. The hook takes the lock (if nobody holds it) and starts the
//! helper with the locked file as its stdin: a flock belongs to the open
//! file, so the helper holds it from then on, and every later hook finds it
//! taken and leaves. The helper gets no stdout or stderr of ours, since a CLI
//! waits for its hook's pipes to close, and its own process group.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// The lock at `path`, taken, or `None` when a helper holds it.
pub fn try_lock(path: &Path) -> io::Result<Option<File>> {
    let f = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)?;
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// The helpers [`spawn`] starts, by their first argument. A helper is
/// started as this very binary: `report-prompt` from a hook, `needs-you`
/// from `needs-you run -- codex`, which lists Codex's approvals itself; so
/// `needs-you` hands these to `report-prompt`'s entry.
pub const HELPERS: &[&str] = &["__send", "__relay", "__watch"];

/// Starts this binary with `args` (a [`HELPERS`] command), handing it
/// `lock` as its stdin.
pub fn spawn<I, S>(args: I, lock: File) -> io::Result<()>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    Command::new(std::env::current_exe()?)
        .args(args)
        .stdin(Stdio::from(lock))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map(drop)
}

/// In the helper: the lock it was handed, if it still holds it (taking it
/// again through the same open file only confirms it).
pub fn inherited_lock() -> Option<File> {
    let lock = io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map(File::from)
        .ok()?;
    lock.try_lock().ok()?;
    Some(lock)
}
