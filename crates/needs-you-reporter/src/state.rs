//! The per-user state directory: which sessions have an open question, the
//! last `seq` of each session, and the one marker file that the shell guard of
//! the frequent closing hooks tests.
//!
//! ```text
//! $DIR/open            exists while any session has an open question (the guard's test -e)
//! $DIR/open-<key>      this session has an open question: "<kind> <seq> [<transcript offset>]"
//! $DIR/expect-<key>    what the session's announced dialog asks, and when (see `Decision::Expect`)
//! $DIR/seq-<key>       the last seq sent for this session
//! $DIR/lock            flock'd around every change, so concurrent hooks agree
//! $DIR/report-prompt.log   one line per failed delivery (the detached sender has no stderr)
//! $DIR/outbox-<key>/   reports waiting to be sent (see the `outbox` module)
//! ```
//!
//! `<key>` is a hash of the session id, so a hostile id cannot name a path.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use needs_you_core::classify::{SessionState, Takeable};
use needs_you_core::Kind;
use needs_you_trust::admission::Asked;

/// The file the shell guard tests.
pub const MARKER: &str = "open";
/// The sender's failure log, kept under this size by starting over.
pub const LOG: &str = "report-prompt.log";
const LOG_MAX_BYTES: u64 = 64 * 1024;

/// Where the state lives: `--state-dir`, else `$NEEDS_YOU_STATE_DIR`, else
/// `$XDG_RUNTIME_DIR/needs-you`, else `$HOME/.cache/needs-you` (and, with no
/// HOME at all, `/tmp/needs-you-<uid>`). [`DEFAULT_DIR_SH`] is the same rule
/// for `sh`, so a hook command can name the marker without knowing the user.
pub fn resolve(explicit: Option<PathBuf>) -> PathBuf {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    explicit
        .or_else(|| var("NEEDS_YOU_STATE_DIR"))
        .or_else(|| var("XDG_RUNTIME_DIR").map(|p| p.join("needs-you")))
        .or_else(|| var("HOME").map(|p| p.join(".cache/needs-you")))
        .unwrap_or_else(|| PathBuf::from(format!("/tmp/needs-you-{}", uid())))
}

/// [`resolve`]'s rule for a POSIX shell, with no process started: the
/// statement [`DEFAULT_DIR_SH_SET`] sets `$default_dir`, then
/// [`DEFAULT_DIR_SH`] is the folder as a word (inside double quotes). Two
/// steps, so that no default stands inside another: Gemini CLI expands each
/// `${VAR:-default}` of a hook's command itself before the shell sees it
/// (from the same environment), and cuts a nested one at its first `}`.
pub const DEFAULT_DIR_SH_SET: &str = "default_dir=${XDG_RUNTIME_DIR:-$HOME/.cache}/needs-you";
pub const DEFAULT_DIR_SH: &str = "${NEEDS_YOU_STATE_DIR:-$default_dir}";

pub fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

pub struct StateDir {
    path: PathBuf,
}

/// A session's open question, as recorded here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenQuestion {
    pub kind: Kind,
    /// The `seq` of the report that opened it: a new open has a new one.
    pub seq: u64,
    /// How long the session's transcript was when it opened.
    pub transcript_at: Option<u64>,
    /// The subagent that asked it (the event's `agent_id`); none: the
    /// person's own agent.
    pub agent: Option<String>,
    /// Which transcript was watched for it ([`session_key`] of its path): a
    /// Codex subagent's dialog is in its own rollout, not the session's.
    pub transcript: Option<String>,
    /// The digest of the request it takes an answer from afar for: an
    /// answer is handed on only while this is the open question.
    pub digest: Option<String>,
    /// The ids of the lasting choices its request offers
    /// ([`needs_you_core::lasting::offered`]): what an answer's keyed id is
    /// read back to (`needs_you_trust::admission`).
    pub lasting: Vec<String>,
}

impl OpenQuestion {
    /// What an answer from afar binds to ([`needs_you_trust::admission`]),
    /// as the question open in `session`.
    pub fn asked(&self, session: &str) -> Asked {
        Asked {
            session: session.to_owned(),
            kind: self.kind,
            seq: self.seq,
            digest: self.digest.clone(),
            lasting: self.lasting.clone(),
        }
    }
}

/// What a question that opens is, as recorded with it.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    pub kind: Kind,
    /// How long the session's transcript was, and which transcript.
    pub transcript: Option<(u64, &'a Path)>,
    /// The subagent that asked it.
    pub agent: Option<&'a str>,
    /// The digest of the request it takes an answer from afar for.
    pub digest: Option<&'a str>,
    /// The ids of the lasting choices that request offers ([`lasting_ids`]).
    pub lasting: &'a [String],
}

/// The ids of the lasting choices `request` offers, as its open records them.
pub fn lasting_ids(request: &needs_you_core::request::Request) -> Vec<String> {
    needs_you_core::lasting::offered(request)
        .into_iter()
        .map(|l| l.offer.id)
        .collect()
}

impl StateDir {
    /// Opens the directory, creating it with mode 0700. Refuses a directory
    /// that another user owns or others can enter: markers there could be
    /// planted or read.
    pub fn open(path: PathBuf) -> io::Result<StateDir> {
        match fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&path)
        {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        let meta = fs::symlink_metadata(&path)?;
        if !meta.is_dir() || meta.uid() != uid() || meta.mode() & 0o077 != 0 {
            return Err(io::Error::other(format!(
                "{} is not a private directory of this user (mode 0700)",
                path.display()
            )));
        }
        Ok(StateDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn marker(&self) -> PathBuf {
        self.path.join(MARKER)
    }

    fn lock(&self) -> io::Result<File> {
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(self.path.join("lock"))?;
        f.lock()?;
        Ok(f)
    }

    /// Records that `session` now has an open question of `kind` (and, for a
    /// CLI with a transcript, how long its transcript was then), and calls
    /// `then` with its next `seq` while still holding the lock, so that
    /// whatever `then` queues is queued in `seq` order.
    pub fn record_open<T>(
        &self,
        session: &str,
        kind: Kind,
        transcript: Option<(u64, &Path)>,
        then: impl FnOnce(u64) -> T,
    ) -> io::Result<T> {
        self.record_open_by(session, kind, transcript, None, then)
    }

    /// [`StateDir::record_open`] of a question that `agent` asked (a subagent).
    pub fn record_open_by<T>(
        &self,
        session: &str,
        kind: Kind,
        transcript: Option<(u64, &Path)>,
        agent: Option<&str>,
        then: impl FnOnce(u64) -> T,
    ) -> io::Result<T> {
        let opening = Opening {
            kind,
            transcript,
            agent,
            digest: None,
            lasting: &[],
        };
        self.record_opening(session, &opening, then)
    }

    /// [`StateDir::record_open`] of what [`Opening`] says.
    pub fn record_opening<T>(
        &self,
        session: &str,
        opening: &Opening,
        then: impl FnOnce(u64) -> T,
    ) -> io::Result<T> {
        let _lock = self.lock()?;
        let key = session_key(session);
        let seq = self.bump_seq(&key)?;
        // `kind seq [at|- [agent|- [transcript|- [digest|- [lasting,…]]]]]`:
        // none of them has spaces, no lasting choice's id a comma.
        let no_space = |w: &&str| !w.is_empty() && !w.contains(char::is_whitespace);
        let agent = opening.agent.filter(no_space);
        let at = opening
            .transcript
            .map_or("-".to_owned(), |(at, _)| at.to_string());
        let file = opening
            .transcript
            .map_or("-".to_owned(), |(_, path)| transcript_key(path));
        let mut words = vec![
            opening.kind.to_string(),
            seq.to_string(),
            at,
            agent.unwrap_or("-").into(),
            file,
            opening.digest.filter(no_space).unwrap_or("-").into(),
            Some(opening.lasting.join(","))
                .filter(|w| no_space(&w.as_str()))
                .unwrap_or_else(|| "-".into()),
        ];
        // Trailing `-` words say nothing.
        while words.len() > 2 && words.last().is_some_and(|w| w == "-") {
            words.pop();
        }
        let line = words.join(" ");
        write_private(&self.path.join(format!("open-{key}")), &line)?;
        touch(&self.marker())?;
        Ok(then(seq))
    }

    /// The session's open question here, if any.
    pub fn open_question(&self, session: &str) -> io::Result<Option<OpenQuestion>> {
        let _lock = self.lock()?;
        Ok(self.read_open(&session_key(session)))
    }

    fn read_open(&self, key: &str) -> Option<OpenQuestion> {
        let text = fs::read_to_string(self.path.join(format!("open-{key}"))).ok()?;
        let mut words = text.split_whitespace();
        Some(OpenQuestion {
            kind: Kind::parse(words.next()?)?,
            seq: words.next().and_then(|w| w.parse().ok()).unwrap_or(0),
            transcript_at: words.next().and_then(|w| w.parse().ok()),
            agent: words.next().filter(|w| *w != "-").map(str::to_owned),
            transcript: words.next().filter(|w| *w != "-").map(str::to_owned),
            digest: words.next().filter(|w| *w != "-").map(str::to_owned),
            lasting: words
                .next()
                .filter(|w| *w != "-")
                .map(|w| w.split(',').map(str::to_owned).collect())
                .unwrap_or_default(),
        })
    }

    /// What is known here of `session`: the kind of its open question, and
    /// what its last announced dialog asks, if that was announced lately.
    pub fn session_state(&self, session: &str) -> io::Result<SessionState> {
        let _lock = self.lock()?;
        let key = session_key(session);
        let open = self.read_open(&key).map(|q| q.kind);
        let expected: Option<Expected> =
            fs::read_to_string(self.path.join(format!("expect-{key}")))
                .ok()
                .and_then(|text| {
                    let (at, json) = text.split_once('\n')?;
                    let age = now_micros().saturating_sub(at.parse().ok()?);
                    (age <= EXPECT_FOR.as_micros() as u64)
                        .then(|| serde_json::from_str(json).ok())?
                });
        Ok(match expected {
            Some(e) => SessionState {
                open,
                expected: Some(e.text),
                expected_takeable: e.takeable,
                expected_agent: e.agent,
            },
            None => SessionState {
                open,
                ..SessionState::default()
            },
        })
    }

    /// Remembers what the dialog that `session` just announced asks, and
    /// what of it can be answered from afar.
    pub fn record_expect(
        &self,
        session: &str,
        text: &str,
        takeable: Option<&Takeable>,
        agent: Option<&str>,
    ) -> io::Result<()> {
        let _lock = self.lock()?;
        let key = session_key(session);
        let path = self.path.join(format!("expect-{key}"));
        let json = serde_json::to_string(&Expected {
            text: text.to_owned(),
            takeable: takeable.cloned(),
            agent: agent.map(str::to_owned),
        })
        .map_err(io::Error::other)?;
        write_private(&path, format!("{}\n{json}", now_micros()))
    }

    /// Records that `session`'s question closed, and calls `then` with its
    /// next `seq` under the lock, like [`StateDir::record_open`]; `None` when
    /// nothing was open for it here, and so nothing to send. With `opened`,
    /// only the question opened by that `seq` is closed, not a newer one.
    pub fn record_close<T>(
        &self,
        session: &str,
        opened: Option<u64>,
        then: impl FnOnce(u64) -> T,
    ) -> io::Result<Option<T>> {
        self.record_close_if(session, opened, |_| true, then)
    }

    /// [`StateDir::record_close`] only if `applies` to the open question
    /// (read under the lock): nothing otherwise.
    pub fn record_close_if<T>(
        &self,
        session: &str,
        opened: Option<u64>,
        applies: impl FnOnce(&OpenQuestion) -> bool,
        then: impl FnOnce(u64) -> T,
    ) -> io::Result<Option<T>> {
        let _lock = self.lock()?;
        let key = session_key(session);
        let open = self.path.join(format!("open-{key}"));
        let Some(current) = self.read_open(&key) else {
            return Ok(None);
        };
        if opened.is_some_and(|seq| seq != current.seq) || !applies(&current) {
            return Ok(None);
        }
        let seq = self.bump_seq(&key)?;
        fs::remove_file(&open)?;
        let _ = fs::remove_file(self.path.join(format!("expect-{key}")));
        if !self.any_open()? {
            match fs::remove_file(self.marker()) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(Some(then(seq)))
    }

    /// Sessions with an open question, for `doctor`.
    pub fn open_sessions(&self) -> io::Result<usize> {
        Ok(fs::read_dir(&self.path)?
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("open-"))
            .count())
    }

    fn any_open(&self) -> io::Result<bool> {
        Ok(self.open_sessions()? > 0)
    }

    fn bump_seq(&self, key: &str) -> io::Result<u64> {
        let path = self.path.join(format!("seq-{key}"));
        let last = fs::read_to_string(&path)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0);
        let seq = next_seq(last, now_micros());
        let tmp = self.path.join(format!(".seq-{key}.tmp"));
        fs::write(&tmp, seq.to_string())?;
        fs::rename(&tmp, &path)?;
        Ok(seq)
    }

    /// Appends one line to the failure log, starting over when it grows large.
    pub fn log(&self, line: &str) {
        let path = self.path.join(LOG);
        if fs::metadata(&path).is_ok_and(|m| m.len() > LOG_MAX_BYTES) {
            let _ = fs::remove_file(&path);
        }
        if let Ok(mut f) = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
        {
            let _ = writeln!(f, "{} {line}", now_micros() / 1_000_000);
        }
    }
}

/// What an `expect-<key>` file holds after its time.
#[derive(serde::Serialize, serde::Deserialize)]
struct Expected {
    text: String,
    #[serde(default)]
    takeable: Option<Takeable>,
    /// The subagent that announced it, if one did.
    #[serde(default)]
    agent: Option<String>,
}

/// An announced dialog is confirmed within seconds (Claude Code's
/// `permission_prompt` comes about 6 s after its `PermissionRequest`); an
/// older announcement belongs to some other dialog.
const EXPECT_FOR: std::time::Duration = std::time::Duration::from_secs(60);

/// Writes a small file only this user can read, through a rename from a
/// dot-named file beside it, so a reader never sees half of it.
pub fn write_private(path: &Path, data: impl AsRef<[u8]>) -> io::Result<()> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(data.as_ref()))?;
    fs::rename(&tmp, path)
}

fn touch(path: &Path) -> io::Result<()> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .map(drop)
}

/// The next `seq`: wall-clock microseconds, but always above the last one, so
/// two reports in the same microsecond (or after the clock stepped back) still
/// grow strictly.
pub fn next_seq(last: u64, now_micros: u64) -> u64 {
    now_micros.max(last + 1)
}

pub fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// FNV-1a, 64 bits, in hex: a stable file-name-safe key for a session id.
/// The key under which a transcript's path is recorded (no spaces, fixed length).
pub fn transcript_key(path: &Path) -> String {
    session_key(&path.to_string_lossy())
}

pub fn session_key(session: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in session.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, StateDir) {
        let t = tempfile::tempdir().unwrap();
        let s = StateDir::open(t.path().join("state")).unwrap();
        (t, s)
    }

    #[test]
    fn seq_grows_strictly() {
        assert_eq!(next_seq(0, 100), 100);
        assert_eq!(next_seq(100, 100), 101);
        assert_eq!(next_seq(500, 100), 501);
        let (_t, s) = dir();
        let a = s.record_open("s", Kind::Dialog, None, |seq| seq).unwrap();
        let b = s.record_open("s", Kind::Dialog, None, |seq| seq).unwrap();
        let c = s.record_close("s", None, |seq| seq).unwrap().unwrap();
        assert!(a < b && b < c, "{a} {b} {c}");
    }

    #[test]
    fn marker_follows_the_open_sessions() {
        let (_t, s) = dir();
        assert!(!s.marker().exists());
        s.record_open("a", Kind::Reply, None, drop).unwrap();
        s.record_open("b", Kind::Reply, None, drop).unwrap();
        assert!(s.marker().exists());
        assert!(s.record_close("a", None, drop).unwrap().is_some());
        assert!(s.marker().exists(), "b is still open");
        assert!(s.record_close("b", None, drop).unwrap().is_some());
        assert!(!s.marker().exists());
        assert_eq!(
            s.record_close("b", None, drop).unwrap(),
            None,
            "nothing open: nothing to send"
        );
    }

    #[test]
    fn a_subagent_s_question_is_closed_only_by_what_applies_to_it() {
        let (_t, s) = dir();
        s.record_expect("s", "Run it?", None, Some("a1")).unwrap();
        assert_eq!(
            s.session_state("s").unwrap().expected_agent.as_deref(),
            Some("a1")
        );
        s.record_open_by("s", Kind::Permission, None, Some("a1"), drop)
            .unwrap();
        let open = s.open_question("s").unwrap().unwrap();
        assert_eq!(
            (open.agent.as_deref(), open.transcript_at),
            (Some("a1"), None)
        );
        let mine = |q: &OpenQuestion| q.agent.is_none();
        assert!(s.record_close_if("s", None, mine, drop).unwrap().is_none());
        assert!(
            s.open_question("s").unwrap().is_some(),
            "not the person's to close"
        );
        let its = |q: &OpenQuestion| q.agent.as_deref() == Some("a1");
        assert!(s.record_close_if("s", None, its, drop).unwrap().is_some());
        assert!(s.open_question("s").unwrap().is_none());
        // With a transcript length, the agent comes after it.
        let rollout = Path::new("/home/u/.codex/sessions/rollout a2.jsonl");
        s.record_open_by("t", Kind::Dialog, Some((77, rollout)), Some("a2"), drop)
            .unwrap();
        let open = s.open_question("t").unwrap().unwrap();
        assert_eq!(
            (open.agent.as_deref(), open.transcript_at),
            (Some("a2"), Some(77))
        );
        assert_eq!(open.transcript, Some(transcript_key(rollout)));
        // The person's own, with a transcript: no agent between.
        s.record_open_by("u", Kind::Dialog, Some((5, rollout)), None, drop)
            .unwrap();
        let open = s.open_question("u").unwrap().unwrap();
        assert_eq!((open.agent, open.transcript_at), (None, Some(5)));
        assert_eq!(open.transcript, Some(transcript_key(rollout)));
        // The digest of what it takes from afar and its lasting choices'
        // ids, with or without the rest.
        let digest = "d".repeat(64);
        let ids = [
            format!("keep-{}", "e".repeat(64)),
            format!("keep-{}", "f".repeat(64)),
        ];
        for (transcript, lasting) in [
            (None, &ids[..]),
            (Some((9, rollout)), &ids[..1]),
            (None, &[][..]),
        ] {
            let opening = Opening {
                kind: Kind::Permission,
                transcript,
                agent: None,
                digest: Some(&digest),
                lasting,
            };
            let seq = s.record_opening("v", &opening, |seq| seq).unwrap();
            let open = s.open_question("v").unwrap().unwrap();
            assert_eq!(
                (open.seq, open.digest.as_deref(), &open.lasting[..]),
                (seq, Some(digest.as_str()), lasting)
            );
            assert_eq!(open.transcript.is_some(), transcript.is_some());
        }
    }

    #[test]
    fn the_open_kind_and_a_recent_announcement_are_remembered_until_the_close() {
        let (_t, s) = dir();
        assert_eq!(s.session_state("s").unwrap(), SessionState::default());
        s.record_expect("s", "Remove the build folder\n$ rm -rf build", None, None)
            .unwrap();
        let seq = s
            .record_open(
                "s",
                Kind::Permission,
                Some((4096, Path::new("/t.jsonl"))),
                |seq| seq,
            )
            .unwrap();
        assert_eq!(
            s.open_question("s").unwrap(),
            Some(OpenQuestion {
                kind: Kind::Permission,
                seq,
                transcript_at: Some(4096),
                agent: None,
                transcript: Some(transcript_key(Path::new("/t.jsonl"))),
                digest: None,
                lasting: vec![],
            })
        );
        let state = s.session_state("s").unwrap();
        assert_eq!(state.open, Some(Kind::Permission));
        assert_eq!(
            state.expected.as_deref(),
            Some("Remove the build folder\n$ rm -rf build"),
            "a text of several lines survives"
        );
        s.record_close("s", Some(seq + 1), drop).unwrap();
        assert!(
            s.open_question("s").unwrap().is_some(),
            "a newer question stays"
        );
        s.record_close("s", Some(seq), drop).unwrap();
        assert_eq!(s.session_state("s").unwrap(), SessionState::default());
    }

    #[test]
    fn directory_is_private() {
        let (t, s) = dir();
        let mode = fs::metadata(s.path()).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let loose = t.path().join("loose");
        fs::create_dir(&loose).unwrap();
        fs::set_permissions(&loose, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        assert!(StateDir::open(loose).is_err());
    }

    #[test]
    fn session_keys_are_safe_names() {
        let k = session_key("../../etc/passwd");
        assert_eq!(k.len(), 16);
        assert!(k.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(session_key("a"), session_key("b"));
    }
}
