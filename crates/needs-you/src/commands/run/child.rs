//! The command as our child process: started without our own secrets, its
//! end read, and turned into our own exit. Shared by `run` in this terminal
//! and in a tmux session of its own (`tmux`).

use std::ffi::{OsStr, OsString};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};
use std::sync::atomic::Ordering;

use super::signals::CHILD;
use crate::fail::{exit, Fail, Result};

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Code(i32),
    Signal(i32),
}

impl Ended {
    pub(super) fn of(status: ExitStatus) -> Ended {
        match (status.code(), status.signal()) {
            (Some(c), _) => Ended::Code(c),
            (None, Some(s)) => Ended::Signal(s),
            _ => Ended::Code(1),
        }
    }

    pub(super) fn to_line(self) -> String {
        match self {
            Ended::Code(c) => format!("code {c}"),
            Ended::Signal(s) => format!("signal {s}"),
        }
    }

    pub(super) fn from_line(line: &str) -> Option<Ended> {
        let (kind, n) = line.trim().split_once(' ')?;
        let n = n.parse().ok()?;
        match kind {
            "code" => Some(Ended::Code(n)),
            "signal" => Some(Ended::Signal(n)),
            _ => None,
        }
    }
}

/// Our exit: the command's code, or its death by the same signal.
pub(crate) fn finish(ended: Ended) -> Result<i32> {
    match ended {
        Ended::Code(c) => Ok(c),
        Ended::Signal(s) => {
            // SAFETY: back to the default action, then the same signal to us.
            unsafe {
                libc::signal(s, libc::SIG_DFL);
                libc::raise(s);
            }
            Ok(128 + s)
        }
    }
}

/// Our own secrets, which the person may have exported for `needs-you`
/// itself: never the agent's to read (a prompt-injected agent would print
/// them, or use them).
pub const OUR_SECRETS: &[&str] = &[
    "NEEDS_YOU_ADMIN_TOKEN",
    "NEEDS_YOU_NTFY_TOKEN",
    "NEEDS_YOU_WEBHOOK_SECRET",
];

/// Starts the command with `env` added and [`OUR_SECRETS`] removed, and
/// forwards signals to it from now on.
pub(super) fn start<K: AsRef<OsStr>, V: AsRef<OsStr>>(
    command: &[OsString],
    env: impl IntoIterator<Item = (K, V)>,
) -> Result<std::process::Child> {
    let mut cmd = Command::new(&command[0]);
    for secret in OUR_SECRETS {
        cmd.env_remove(secret);
    }
    let child = cmd.args(&command[1..]).envs(env).spawn().map_err(|e| {
        Fail::new(
            exit::NOT_FOUND,
            format!("cannot start {}: {e}", command[0].to_string_lossy()),
        )
    })?;
    CHILD.store(child.id() as i32, Ordering::SeqCst);
    Ok(child)
}

pub(crate) fn here(env: &[(&str, String)], command: &[OsString]) -> Result<Ended> {
    let mut child = start(command, env.iter().map(|(k, v)| (k, v)))?;
    let status = child
        .wait()
        .map_err(|e| Fail::new(exit::REFUSED, format!("lost the command: {e}")))?;
    CHILD.store(0, Ordering::SeqCst);
    Ok(Ended::of(status))
}
