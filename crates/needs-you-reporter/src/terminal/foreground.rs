//! Whether the agent that asked is the program a typed line reaches.
//!
//! A pane's terminal hands keystrokes to its foreground process group. At
//! the open the hook records the agent's process (`tmux::this_pane`). Before
//! every keystroke the relay checks that this very process (pid and start
//! time) still runs, on the pane's terminal, and that the foreground group
//! is its own or that of a process between it and the pane's first one: the
//! group of a wrapper such as `needs-you run`, which keeps its agent in its
//! group. Not the first process's group: that is the shell the agent was
//! started from, at its prompt.
//!
//! So nothing is typed when the agent has exited while its wrapper still
//! runs (the terminal would keep the line for the shell that comes back),
//! when it was suspended, or when it handed the terminal to another program.

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::procfs;

/// Programs that read a typed line as a command to run.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "tcsh", "csh", "ash", "nu", "elvish",
    "xonsh",
];

/// The agent's process, as recorded at the open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Agent {
    pub pid: u32,
    pub started: u64,
}

/// Why a line typed into the terminal of `root` (the pane's first process)
/// would not reach `agent` now, if it would not.
pub fn check(agent: &Agent, root: u32) -> Result<(), Error> {
    let a = procfs::stat(agent.pid)
        .filter(|s| s.started == agent.started)
        .ok_or_else(|| Error::Terminal("the agent has exited".into()))?;
    let terminal = procfs::stat(root)
        .ok_or_else(|| Error::Terminal("the pane's first process is gone".into()))?;
    if a.tty == 0 || a.tty != terminal.tty {
        return Err(Error::Terminal(
            "the agent no longer runs on the pane's terminal".into(),
        ));
    }
    let foreground = terminal.tpgid;
    let mut pid = agent.pid;
    let mut s = a;
    loop {
        if s.pgrp == foreground {
            return Ok(());
        }
        if pid == root || s.ppid == root || s.ppid <= 1 {
            break;
        }
        pid = s.ppid;
        s = procfs::stat(pid)
            .ok_or_else(|| Error::Terminal("the agent's process tree changed".into()))?;
    }
    Err(Error::Terminal(
        "the agent is not in the terminal's foreground (suspended, or another program has it)"
            .into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn a_process_that_ended_is_not_the_agent() {
        let mut child = Command::new("sleep")
            .arg("0")
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let pid = child.id();
        let started = procfs::stat(pid).map_or(0, |s| s.started);
        child.wait().unwrap();
        let gone = Agent { pid, started };
        assert_eq!(
            check(&gone, std::process::id()).unwrap_err().message(),
            "the agent has exited"
        );
    }

    #[test]
    fn without_a_terminal_nothing_is_the_foreground() {
        // A child in a new session has no controlling terminal at all.
        let mut child = Command::new("setsid").args(["sleep", "5"]).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let pid = child.id();
        let s = procfs::stat(pid).unwrap();
        let agent = Agent {
            pid,
            started: s.started,
        };
        assert_eq!(
            check(&agent, pid).unwrap_err().message(),
            "the agent no longer runs on the pane's terminal"
        );
        let _ = child.kill();
        let _ = child.wait();
    }
}
