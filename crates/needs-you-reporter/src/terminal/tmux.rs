//! tmux: the pane an agent runs in, found from `$TMUX` and `$TMUX_PANE`,
//! checked again before typing, and typed into with `send-keys`.
//!
//! A pane is known by its server (socket and pid), its id (`%N`, unique for
//! the server's life) and the process tmux started in it, with that
//! process's start time: a pane id reused after a server restart, or a pid
//! reused by another program, is never mistaken for the agent's pane.

use std::path::Path;
use std::process::Command;

use needs_you_core::screen::Screen;
use serde::{Deserialize, Serialize};

use super::foreground::{self, Agent, SHELLS};
use crate::error::Error;
use crate::procfs;

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
    /// The agent's own process, which keystrokes must reach (none in a pane
    /// recorded by an older reporter: nothing is typed there).
    #[serde(default)]
    pub agent: Option<Agent>,
    /// `session:window.pane`, for people.
    pub target: String,
}

/// `$TMUX` is `socket,server_pid,session`.
fn server() -> Option<(String, u32)> {
    let tmux = std::env::var("TMUX").ok()?;
    let mut parts = tmux.rsplitn(3, ',');
    let _session = parts.next()?;
    let pid = parts.next()?.parse().ok()?;
    let socket = parts.next()?.to_owned();
    Some((socket, pid))
}

/// This hook's pane, if it runs in tmux, found in one walk up from this
/// process: its first process is the one whose parent is the tmux server,
/// and the agent the first ancestor on the way that is not a shell (CLIs run
/// hooks through `sh -c`; the plugins run us themselves). None when only
/// shells lie between: no agent to type into.
pub fn this_pane(state_dir: &Path) -> Option<TmuxPane> {
    let (socket, server_pid) = server()?;
    let pane_id = std::env::var("TMUX_PANE")
        .ok()
        .filter(|p| p.starts_with('%'))?;
    let me = std::process::id();
    let mut pid = me;
    let mut agent = None;
    let (pane_pid, pane_started) = loop {
        let s = procfs::stat(pid)?;
        if agent.is_none() && pid != me && !SHELLS.contains(&s.comm.as_str()) {
            agent = Some(Agent {
                pid,
                started: s.started,
            });
        }
        if s.ppid == server_pid {
            break (pid, s.started);
        }
        if s.ppid <= 1 {
            return None;
        }
        pid = s.ppid;
    };
    let agent = agent?;
    let target = target(state_dir, &socket, server_pid, &pane_id, pane_pid)?;
    Some(TmuxPane {
        socket,
        server_pid,
        pane_id,
        pane_pid,
        pane_started,
        agent: Some(agent),
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
    let mut ask = Command::new("tmux");
    ask.args(["-S", socket, "display-message", "-p", "-t", pane_id])
        .arg("#{session_name}:#{window_index}.#{pane_index}");
    let (ok, out) = read_within(ask, TMUX_ANSWERS_WITHIN)?;
    let t = String::from_utf8_lossy(&out).trim().to_owned();
    if !ok || t.is_empty() {
        return None;
    }
    let _ = crate::state::write_private(&cache, &t);
    Some(t)
}

/// How long the hook waits for tmux: it runs in the agent's loop, and a
/// tmux server that hangs must not hang the agent (the pane then goes
/// unrecorded, as outside tmux). tmux answers in a few milliseconds.
const TMUX_ANSWERS_WITHIN: std::time::Duration = std::time::Duration::from_millis(500);

/// How long the relay waits for a pane's screen: it types answers in the same
/// loop, which a tmux server that hangs must not hold.
const CAPTURE_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `cmd` for its stdout, killed if it takes longer than `limit`:
/// whether it succeeded, and what it printed; `None` if it could not run or
/// was too slow. The output is read on a thread while the program runs: a
/// whole screen, with its colours, is far more than a pipe holds, and a
/// program blocked writing it would never end.
fn read_within(mut cmd: Command, limit: std::time::Duration) -> Option<(bool, Vec<u8>)> {
    use std::io::Read;
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        stdout.read_to_end(&mut out).map(|_| out)
    });
    let end = std::time::Instant::now() + limit;
    let status = loop {
        match child.try_wait().ok()? {
            Some(status) => break status,
            None if std::time::Instant::now() >= end => {
                // Killed, its pipe closes, and the reader ends.
                let _ = child.kill();
                let _ = child.wait();
                let _ = reader.join();
                return None;
            }
            None => std::thread::sleep(std::time::Duration::from_millis(2)),
        }
    };
    let out = reader.join().ok()?.ok()?;
    Some((status.success(), out))
}

/// Whether an answer may be typed into the pane now: it exists, still runs
/// the process recorded at the open, shows the terminal (not a copy or
/// choose mode, which would take the keys as commands), does not copy keys to
/// other panes (`synchronize-panes`), and its keystrokes reach the agent
/// ([`foreground::check`]), not a shell.
pub fn check(p: &TmuxPane) -> Result<(), Error> {
    let out = Command::new("tmux")
        .args(["-S", &p.socket, "display-message", "-p", "-t", &p.pane_id])
        .arg("#{pane_pid} #{pane_in_mode} #{synchronize-panes} #{pane_current_command}")
        .output()
        .map_err(|e| Error::Terminal(format!("cannot run tmux: {e}")))?;
    if !out.status.success() {
        return Err(Error::Terminal("the agent's tmux pane is gone".into()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut fields = text.trim().splitn(4, ' ');
    let mut next = || fields.next().unwrap_or("");
    let (pid, in_mode, synchronized, command) = (next(), next(), next(), next());
    if in_mode != "0" {
        return Err(Error::Terminal(
            "the pane is in tmux's copy mode: keys would be taken as its commands".into(),
        ));
    }
    if synchronized != "0" {
        return Err(Error::Terminal(
            "the pane's window has synchronize-panes on: keys would go to every pane".into(),
        ));
    }
    still_the_agent(p, pid, command)
}

/// Whether the pane still runs the process recorded at the open (`pid`, as
/// tmux says now, and its start time), with the agent, not a shell, in front
/// (`command`, tmux's `pane_current_command`).
fn still_the_agent(p: &TmuxPane, pid: &str, command: &str) -> Result<(), Error> {
    let same = pid.parse::<u32>().ok() == Some(p.pane_pid)
        && procfs::stat(p.pane_pid).map(|s| s.started) == Some(p.pane_started);
    if !same {
        return Err(Error::Terminal(
            "the tmux pane now runs another program than the agent".into(),
        ));
    }
    if SHELLS.contains(&command) {
        return Err(Error::Terminal(format!(
            "the pane is at a shell prompt ({command}): the agent has exited, and a typed answer would run as a command"
        )));
    }
    match &p.agent {
        Some(agent) => foreground::check(agent, p.pane_pid),
        None => Err(Error::Terminal(
            "the pane was recorded by an older report-prompt, which did not note the agent's process: answer in the terminal".into(),
        )),
    }
}

/// The pane's screen as tmux shows it, read only while the pane still runs
/// the agent (`still_the_agent`). The pane's state and its text come from
/// one tmux command, so that what is checked is what is read.
pub fn capture(p: &TmuxPane) -> Result<Screen, Error> {
    let mut cmd = Command::new("tmux");
    cmd.args(["-S", &p.socket, "display-message", "-p", "-t", &p.pane_id])
        .arg("#{pane_pid} #{pane_width} #{pane_height} #{cursor_y} #{cursor_flag} #{pane_current_command}")
        .args([";", "capture-pane", "-p", "-e", "-t", &p.pane_id]);
    let (ok, out) = read_within(cmd, CAPTURE_WITHIN)
        .ok_or_else(|| Error::Terminal("tmux did not show the pane in time".into()))?;
    if !ok {
        return Err(Error::Terminal("the agent's tmux pane is gone".into()));
    }
    let text = String::from_utf8_lossy(&out);
    let (state, capture) = text.split_once('\n').unwrap_or((&text, ""));
    let mut fields = state.splitn(6, ' ');
    let mut next = || fields.next().unwrap_or("");
    let (pid, width, height, cursor_y, cursor_shown, command) =
        (next(), next(), next(), next(), next(), next());
    still_the_agent(p, pid, command)?;
    let cursor = (cursor_shown == "1")
        .then(|| cursor_y.parse().ok())
        .flatten();
    Ok(Screen::from_capture(
        capture,
        width.parse().unwrap_or(0),
        height.parse().unwrap_or(0),
        cursor,
    ))
}

fn send_keys(p: &TmuxPane, keys: &[&str]) -> Result<(), Error> {
    let status = Command::new("tmux")
        .args(["-S", &p.socket, "send-keys", "-t", &p.pane_id])
        .args(keys)
        .status()
        .map_err(|e| Error::Terminal(format!("cannot run tmux: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::Terminal("tmux could not type into the pane".into()))
    }
}

/// Types `line` literally (`-l`, after `--` so a leading `-` is text).
pub fn send_text(p: &TmuxPane, line: &str) -> Result<(), Error> {
    send_keys(p, &["-l", "--", &literal_argument(line)])
}

/// tmux reads an argument ending in `;` as the end of a command, and drops
/// that `;`; ending in `\;`, as a `;` it keeps. So the last `;` is escaped.
fn literal_argument(line: &str) -> String {
    match line.strip_suffix(';') {
        Some(rest) => format!("{rest}\\;"),
        None => line.to_owned(),
    }
}

pub fn send_enter(p: &TmuxPane) -> Result<(), Error> {
    send_keys(p, &["Enter"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_program_is_given_up_on() {
        let mut slow = Command::new("sleep");
        slow.arg("5");
        // Waited for, it would end well, with nothing printed.
        assert!(read_within(slow, std::time::Duration::from_millis(100)).is_none());
        let mut quick = Command::new("echo");
        quick.arg("x:0.1");
        let (ok, out) = read_within(quick, std::time::Duration::from_secs(5)).unwrap();
        assert!(ok);
        assert_eq!(out, b"x:0.1\n");
    }

    #[test]
    fn a_long_output_is_read_whole_and_a_slow_program_given_up_on() {
        let mut big = Command::new("head");
        big.args(["-c", "1000000", "/dev/zero"]);
        let (ok, out) = read_within(big, std::time::Duration::from_secs(10)).unwrap();
        assert!(ok);
        assert_eq!(out.len(), 1_000_000, "more than a pipe holds, read whole");
        let mut slow = Command::new("sleep");
        slow.arg("5");
        let started = std::time::Instant::now();
        assert!(read_within(slow, std::time::Duration::from_millis(100)).is_none());
        assert!(started.elapsed() < std::time::Duration::from_secs(4));
    }

    #[test]
    fn a_last_semicolon_is_escaped_for_tmux() {
        assert_eq!(literal_argument("yes"), "yes");
        assert_eq!(literal_argument("a; b"), "a; b");
        assert_eq!(literal_argument("yes;"), "yes\\;");
        assert_eq!(literal_argument(";"), "\\;");
        assert_eq!(literal_argument("a\\;"), "a\\\\;");
    }
}
