//! Which process runs this hook. Codex runs hooks inside the process that
//! serves its session: the terminal's own with `codex --no-daemon`, or else
//! one background app-server shared by every Codex terminal of the user
//! (per `CODEX_HOME`), which has the environment of whichever terminal
//! happened to start it. A hook there would report with another terminal's
//! task credential, so the reporter refuses to.

use std::fs;

/// How far up the process tree to look: the hook's shell may or may not have
/// replaced itself with us.
const LEVELS: usize = 3;

/// Whether an ancestor of this process is Codex's shared app-server (started
/// as `codex app-server … --managed-daemon`). Where `/proc` is not there to
/// tell, it says no.
pub fn under_shared_codex_server() -> bool {
    let mut pid = std::process::id();
    for _ in 0..LEVELS {
        let Some(parent) = parent_of(pid) else {
            return false;
        };
        if parent <= 1 {
            return false;
        }
        if is_shared_codex_server(&cmdline(parent)) {
            return true;
        }
        pid = parent;
    }
    false
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name, in parentheses, may hold spaces: the fields after it
    // are state, then the parent's pid.
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn cmdline(pid: u32) -> Vec<String> {
    fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The shared server's command line, as Codex 0.171.0 starts it.
fn is_shared_codex_server(args: &[String]) -> bool {
    args.iter().any(|a| a == "app-server") && args.iter().any(|a| a == "--managed-daemon")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_server_is_told_by_its_command_line() {
        let args = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(is_shared_codex_server(&args(
            "/home/u/.codex/packages/app-server-daemon/releases/0.171.0/bin/codex app-server --listen unix:// --analytics-default-enabled --managed-daemon"
        )));
        assert!(!is_shared_codex_server(&args("/usr/bin/codex --no-daemon")));
        assert!(!is_shared_codex_server(&args(
            "codex app-server daemon pid-update-loop"
        )));
    }

    #[test]
    fn this_test_runs_under_no_codex_server() {
        assert!(parent_of(std::process::id()).is_some());
        assert!(!under_shared_codex_server());
    }
}
