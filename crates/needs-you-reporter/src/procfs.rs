//! What Linux's `/proc` tells of a process: its parent, process group,
//! terminal and start time. Elsewhere every function here says "unknown"
//! (`None`, or an empty command line), and the callers take that as no.

use std::fs;

/// The fields of `/proc/<pid>/stat` this crate reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    /// The program's name, cut by the kernel to 15 bytes.
    pub comm: String,
    pub ppid: u32,
    /// The process group.
    pub pgrp: i32,
    /// The controlling terminal's device number (0: none).
    pub tty: i32,
    /// The terminal's foreground process group (-1: no terminal).
    pub tpgid: i32,
    /// Start time, in clock ticks since boot: with the pid, a process's
    /// identity (a pid is reused; a pid and a start time are not).
    pub started: u64,
}

pub fn stat(pid: u32) -> Option<Stat> {
    parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Parses one `stat` line. The name is in parentheses and may hold spaces
/// and parentheses itself: the fields are read after its last `)`.
fn parse_stat(line: &str) -> Option<Stat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let comm = line.get(open + 1..close)?.to_owned();
    let f: Vec<&str> = line.get(close + 1..)?.split_whitespace().collect();
    // After the name: state (3), ppid (4), pgrp (5), session (6), tty_nr (7),
    // tpgid (8), …, starttime (22).
    Some(Stat {
        comm,
        ppid: f.get(1)?.parse().ok()?,
        pgrp: f.get(2)?.parse().ok()?,
        tty: f.get(4)?.parse().ok()?,
        tpgid: f.get(5)?.parse().ok()?,
        started: f.get(19)?.parse().ok()?,
    })
}

/// A process's arguments (empty when unknown).
pub fn cmdline(pid: u32) -> Vec<String> {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The value of `name` in the environment `pid` was started with.
#[cfg(test)]
pub fn environ_var(pid: u32, name: &str) -> Option<String> {
    environ_vars(pid, &[name]).pop().map(|(_, v)| v)
}

/// The values of `names` in the environment `pid` was started with, those
/// it has, read at once, if that process runs as this user: a process of
/// another user's is never read, even where this one could (as root).
pub fn environ_vars<'a>(pid: u32, names: &[&'a str]) -> Vec<(&'a str, String)> {
    use std::os::unix::fs::MetadataExt;
    let own = fs::metadata(format!("/proc/{pid}")).is_ok_and(|m| m.uid() == crate::state::uid());
    let Some(environ) = own
        .then(|| fs::read(format!("/proc/{pid}/environ")).ok())
        .flatten()
    else {
        return Vec::new();
    };
    names
        .iter()
        .filter_map(|&name| {
            let prefix = format!("{name}=");
            environ
                .split(|&c| c == 0)
                .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
                .map(|value| (name, String::from_utf8_lossy(value).into_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_spaces_and_parentheses_is_read_whole() {
        let line =
            "4242 (a (b) c) S 17 4242 17 34816 4242 4194304 0 0 0 0 1 2 0 0 20 0 1 0 987654 1 2";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.comm, "a (b) c");
        assert_eq!(
            (s.ppid, s.pgrp, s.tty, s.tpgid, s.started),
            (17, 4242, 34816, 4242, 987654)
        );
    }

    #[test]
    fn a_variable_is_read_from_the_environment_a_process_was_started_with() {
        let child = std::process::Command::new("sleep")
            .arg("5")
            .env("NEEDS_YOU_PROCFS_TEST", "nyt_from-the-agent")
            .spawn()
            .unwrap();
        let child = Guard(child);
        // Right after the spawn the kernel may still be setting up the new
        // program, whose environment then reads empty.
        let mut value = None;
        for _ in 0..100 {
            value = environ_var(child.0.id(), "NEEDS_YOU_PROCFS_TEST");
            if value.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(value.as_deref(), Some("nyt_from-the-agent"));
        assert_eq!(environ_var(child.0.id(), "NEEDS_YOU_PROCFS_TES"), None);
        assert_eq!(environ_var(child.0.id(), "NOT_THERE_AT_ALL"), None);
    }

    /// Kills the child when the test ends, however it ends.
    struct Guard(std::process::Child);
    impl Drop for Guard {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    #[test]
    fn our_own_process_is_known() {
        let me = stat(std::process::id()).unwrap();
        assert!(me.ppid > 0 && me.started > 0);
        assert!(!cmdline(std::process::id()).is_empty());
    }
}
