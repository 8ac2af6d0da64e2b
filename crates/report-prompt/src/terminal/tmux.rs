//! tmux: the pane an agent runs in, found from `$TMUX` and `$TMUX_PANE`,
//! checked again before typing, and typed into with `send-keys`.
//!
//! A pane is known by its server (socket and pid), its id (`%N`, unique for
//! the server's life) and the process tmux started in it, with that
//! process's start time: a pane id reused after a server restart, or a pid
//! reused by another program, is never mistaken for the agent's pane.

use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TmuxPane {
    pub socket: String,
    pub server_pid: u32,
    /// `%N`.
    pub pane_id: String,
    /// The process tmux started in the pane (the agent, or the shell that
    /// started it), and its start time in clock ticks since boot.
    pub pane_pid: u32,
    pub pane_started: u64,
    /// `session:window.pane`, for people.
    pub target: String,
}

/// Programs that read a typed line as a command to run.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "tcsh", "csh", "ash", "nu", "elvish",
    "xonsh",
];

/// `$TMUX` is `socket,server_pid,session`.
fn server() -> Option<(String, u32)> {
    let tmux = std::env::var("TMUX").ok()?;
    let mut parts = tmux.rsplitn(3, ',');
    let _session = parts.next()?;
    let pid = parts.next()?.parse().ok()?;
    let socket = parts.next()?.to_owned();
    Some((socket, pid))
}

/// A process's parent and start time, from `/proc/<pid>/stat`.
pub fn parent_and_start(pid: u32) -> Option<(u32, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: read after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (3), ppid (4), …, starttime (22).
    Some((fields.get(1)?.parse().ok()?, fields.get(19)?.parse().ok()?))
}

/// This hook's pane, if it runs in tmux, with its process found by walking
/// up from this process to the one whose parent is the tmux server.
pub fn this_pane(state_dir: &Path) -> Option<TmuxPane> {
    let (socket, server_pid) = server()?;
    let pane_id = std::env::var("TMUX_PANE")
        .ok()
        .filter(|p| p.starts_with('%'))?;
    let mut pid = std::process::id();
    let (pane_pid, pane_started) = loop {
        let (parent, started) = parent_and_start(pid)?;
        if parent == server_pid {
            break (pid, started);
        }
        if parent <= 1 {
            return None;
        }
        pid = parent;
    };
    let target = target(state_dir, &socket, server_pid, &pane_id, pane_pid)?;
    Some(TmuxPane {
        socket,
        server_pid,
        pane_id,
        pane_pid,
        pane_started,
        target,
    })
}

/// `session:window.pane`, asked of tmux once per pane and kept in the state
/// directory: the hook runs on every question, tmux's client costs a few
/// milliseconds.
fn target(
    state_dir: &Path,
    socket: &str,
    server_pid: u32,
    pane_id: &str,
    pane_pid: u32,
) -> Option<String> {
    let cache = state_dir.join(format!(
        "tmux-{server_pid}-{}-{pane_pid}",
        pane_id.trim_start_matches('%')
    ));
    if let Ok(t) = std::fs::read_to_string(&cache) {
        return Some(t);
    }
    let out = Command::new("tmux")
        .args(["-S", socket, "display-message", "-p", "-t", pane_id])
        .arg("#{session_name}:#{window_index}.#{pane_index}")
        .output()
        .ok()?;
    let t = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() || t.is_empty() {
        return None;
    }
    let _ = crate::state::write_private(&cache, &t);
    Some(t)
}

/// Whether an answer may be typed into the pane now: it exists, still runs
/// the process recorded at the open, and its foreground program is not a
/// shell (a line typed at a shell prompt would run as a command).
pub fn check(p: &TmuxPane) -> Result<(), String> {
    let out = Command::new("tmux")
        .args(["-S", &p.socket, "display-message", "-p", "-t", &p.pane_id])
        .arg("#{pane_pid} #{pane_current_command}")
        .output()
        .map_err(|e| format!("cannot run tmux: {e}"))?;
    if !out.status.success() {
        return Err("the agent's tmux pane is gone".into());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let (pid, command) = text.trim().split_once(' ').unwrap_or((text.trim(), ""));
    let same = pid.parse::<u32>().ok() == Some(p.pane_pid)
        && parent_and_start(p.pane_pid).map(|(_, s)| s) == Some(p.pane_started);
    if !same {
        return Err("the tmux pane now runs another program than the agent".into());
    }
    if SHELLS.contains(&command) {
        return Err(format!(
            "the pane is at a shell prompt ({command}): the agent has exited, and a typed answer would run as a command"
        ));
    }
    Ok(())
}

fn send_keys(p: &TmuxPane, keys: &[&str]) -> Result<(), String> {
    let status = Command::new("tmux")
        .args(["-S", &p.socket, "send-keys", "-t", &p.pane_id])
        .args(keys)
        .status()
        .map_err(|e| format!("cannot run tmux: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err("tmux could not type into the pane".into())
    }
}

/// Types `line` literally (`-l`, after `--` so a leading `-` is text).
pub fn send_text(p: &TmuxPane, line: &str) -> Result<(), String> {
    send_keys(p, &["-l", "--", line])
}

pub fn send_enter(p: &TmuxPane) -> Result<(), String> {
    send_keys(p, &["Enter"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_process_has_a_parent_and_a_start() {
        let (parent, started) = parent_and_start(std::process::id()).unwrap();
        assert!(parent > 0 && started > 0);
    }
}
