//! The outbox: reports waiting to be sent, one file each, in the order they
//! were made, drained by one sender at a time.
//!
//! ```text
//! $DIR/outbox-<key>/                 one per server and credential
//!     <seq, 20 digits>-<session key> one report's JSON body
//! $DIR/outbox-<key>.lock             held by the one sender draining that outbox
//! ```
//!
//! `<key>` is a hash of the server URL and the credential, so the sender,
//! which inherits the environment of the hook that started it, only ever
//! sends reports made with that same credential; the credential itself is
//! never written down. A report's name starts with its `seq` (wall-clock
//! microseconds, strictly growing per session), so names sort in the order
//! each session made its reports.
//!
//! Reports of one session are sent one after the other, in order; reports of
//! different sessions may be sent side by side ([`Outbox::next_free`]).
//!
//! A hook adds its report (written aside, then renamed in, so a sender never
//! reads half a file) and tries the lock. If nobody holds it, it starts a
//! sender and hands it the locked file as its stdin: the lock then belongs to
//! the sender, and every hook after it finds the lock taken and leaves. The
//! sender drains the outbox in order, lets go of the lock, and looks once more:
//! a report added in between is either seen then or finds the lock free and
//! starts a sender of its own.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use crate::detach;
use crate::state::{session_key, write_private};

pub struct Outbox {
    dir: PathBuf,
    lock: PathBuf,
}

/// One queued report.
pub struct Queued {
    pub path: PathBuf,
    /// When it was made: its `seq`, in microseconds since the epoch.
    pub made_micros: u64,
    /// Its session's key: reports of one session go out one at a time.
    pub session: String,
}

impl Outbox {
    /// The outbox for reports to `base` with `token`, inside the state directory.
    pub fn new(state_dir: &Path, base: &str, token: &str) -> Outbox {
        let key = session_key(&format!("{base}\n{token}"));
        Outbox {
            dir: state_dir.join(format!("outbox-{key}")),
            lock: state_dir.join(format!("outbox-{key}.lock")),
        }
    }

    /// Adds a report, made with `seq` for `session`.
    pub fn add(&self, seq: u64, session: &str, body: &[u8]) -> io::Result<()> {
        match fs::DirBuilder::new().mode(0o700).create(&self.dir) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        let name = format!("{seq:020}-{}", session_key(session));
        // Written aside (a dot name, which no sender reads), then renamed in.
        write_private(&self.dir.join(name), body)
    }

    /// The lock file, locked, if no sender holds it.
    pub fn try_lock(&self) -> io::Result<Option<File>> {
        detach::try_lock(&self.lock)
    }

    /// The oldest report of a session that is not in `busy`, and that no
    /// older report of its session waits before.
    pub fn next_free(&self, busy: &HashSet<String>) -> io::Result<Option<Queued>> {
        let mut names = self.names()?;
        names.sort_unstable();
        let mut seen = HashSet::new();
        for name in names {
            let Some((seq, session)) = name.split_once('-') else {
                continue;
            };
            if seen.insert(session.to_owned()) && !busy.contains(session) {
                return Ok(Some(Queued {
                    made_micros: seq.parse().unwrap_or(0),
                    session: session.to_owned(),
                    path: self.dir.join(&name),
                }));
            }
        }
        Ok(None)
    }

    /// Whether any report waits.
    pub fn is_empty(&self) -> bool {
        self.names().map_or(true, |n| n.is_empty())
    }

    /// The names of the queued reports, in no order.
    fn names(&self) -> io::Result<Vec<String>> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        Ok(entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect())
    }
}

impl Queued {
    pub fn read(&self) -> io::Result<Vec<u8>> {
        fs::read(&self.path)
    }

    /// Takes it out of the outbox: sent, refused, or given up on.
    pub fn remove(&self) {
        let _ = fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_come_out_in_seq_order_and_are_kept_apart_by_credential() {
        let t = tempfile::tempdir().unwrap();
        let a = Outbox::new(t.path(), "http://127.0.0.1:1", "nyt_a");
        let b = Outbox::new(t.path(), "http://127.0.0.1:1", "nyt_b");
        let none = HashSet::new();
        assert!(a.is_empty());
        a.add(1_764_460_800_000_002, "s", b"second").unwrap();
        a.add(1_764_460_800_000_001, "s", b"first").unwrap();
        b.add(5, "s", b"other").unwrap();
        let q = a.next_free(&none).unwrap().unwrap();
        assert_eq!(q.made_micros, 1_764_460_800_000_001);
        assert_eq!(q.read().unwrap(), b"first");
        q.remove();
        assert_eq!(
            a.next_free(&none).unwrap().unwrap().read().unwrap(),
            b"second"
        );
        assert_eq!(
            b.next_free(&none).unwrap().unwrap().read().unwrap(),
            b"other"
        );
    }

    #[test]
    fn a_busy_session_holds_its_later_reports_but_not_other_sessions() {
        let t = tempfile::tempdir().unwrap();
        let o = Outbox::new(t.path(), "u", "k");
        o.add(1, "a", b"a1").unwrap();
        o.add(2, "a", b"a2").unwrap();
        o.add(3, "b", b"b1").unwrap();
        let first = o.next_free(&HashSet::new()).unwrap().unwrap();
        assert_eq!(first.read().unwrap(), b"a1");
        let busy = HashSet::from([first.session.clone()]);
        let next = o.next_free(&busy).unwrap().unwrap();
        assert_eq!(
            next.read().unwrap(),
            b"b1",
            "a2 waits behind a1, b1 does not"
        );
        let both = HashSet::from([first.session.clone(), next.session.clone()]);
        assert!(o.next_free(&both).unwrap().is_none());
    }

    #[test]
    fn one_holder_of_the_lock_at_a_time() {
        let t = tempfile::tempdir().unwrap();
        let o = Outbox::new(t.path(), "u", "k");
        let held = o.try_lock().unwrap().expect("free at first");
        assert!(o.try_lock().unwrap().is_none(), "taken while held");
        drop(held);
        assert!(o.try_lock().unwrap().is_some(), "free again");
    }
}
