//! Which process runs this hook. Codex runs hooks inside the process that
//! serves its session: the terminal's own with `codex --no-daemon`, or else
//! one background app-server shared by every Codex terminal of the user
//! (per `CODEX_HOME`), which has the environment of whichever terminal
//! happened to start it. A hook there would report with another terminal's
//! task credential, so the reporter refuses to.

use needs_you_core::Cli;

use crate::procfs;

/// How far up the process tree to look: the hook's shell may or may not have
/// replaced itself with us.
const LEVELS: usize = 3;

/// Whether an ancestor of this process is Codex's shared app-server (started
/// as `codex app-server … --managed-daemon`). Where `/proc` is not there to
/// tell, it says no.
pub fn under_shared_codex_server() -> bool {
    let mut pid = std::process::id();
    for _ in 0..LEVELS {
        let Some(parent) = procfs::stat(pid).map(|s| s.ppid) else {
            return false;
        };
        if parent <= 1 {
            return false;
        }
        if is_shared_codex_server(&procfs::cmdline(parent)) {
            return true;
        }
        pid = parent;
    }
    false
}

/// The command line of the agent that runs this hook: the nearest of the
/// ancestors [`LEVELS`] up (CLIs run hooks through `sh -c`; the plugins run
/// us themselves) that `is_agent` says is it. Empty where none is.
pub fn agent_command_line(is_agent: impl Fn(&[String]) -> bool) -> Vec<String> {
    agent(is_agent).map(|(_, args)| args).unwrap_or_default()
}

/// The agent that runs this hook ([`agent_command_line`]): its pid and
/// command line.
fn agent(is_agent: impl Fn(&[String]) -> bool) -> Option<(u32, Vec<String>)> {
    let mut pid = std::process::id();
    for _ in 0..LEVELS {
        let parent = procfs::stat(pid)?.ppid;
        if parent <= 1 {
            return None;
        }
        let args = procfs::cmdline(parent);
        if is_agent(&args) {
            return Some((parent, args));
        }
        pid = parent;
    }
    None
}

/// Whether a command line is a shell's: a CLI runs its hooks through one.
fn is_shell(args: &[String]) -> bool {
    args.first().is_some_and(|a| {
        let name = a.rsplit('/').next().unwrap_or(a);
        crate::terminal::foreground::SHELLS.contains(&name)
    })
}

/// Whether a command line is npm's launcher of ours (`node
/// …/bin/report-prompt.js`), which runs this binary for a hook that found
/// report-prompt on the PATH.
fn is_our_launcher(args: &[String]) -> bool {
    args.get(1)
        .is_some_and(|a| a.ends_with("/bin/report-prompt.js"))
}

/// Whether the agent of `cli` that runs this hook was started for one
/// prompt ([`needs_you_core::classify::one_shot`]), read from its command
/// line.
pub fn runs_for_one_prompt(cli: Cli) -> bool {
    needs_you_core::classify::one_shot(cli, &agent_command_line(may_be_agent))
}

/// Whether an ancestor's command line may be the agent that runs this hook:
/// neither the shell it runs hooks through nor our npm launcher.
pub fn may_be_agent(args: &[String]) -> bool {
    !args.is_empty() && !is_shell(args) && !is_our_launcher(args)
}

/// The values of `names` in the environment the agent that runs this hook
/// was started with (the first ancestor that [`may_be_agent`], running as
/// this user), where the CLI handed its hooks a narrower one: those it has,
/// not empty.
pub fn agent_env_vars<'a>(names: &[&'a str]) -> Vec<(&'a str, String)> {
    let Some((pid, _)) = agent(may_be_agent) else {
        return Vec::new();
    };
    let mut found = procfs::environ_vars(pid, names);
    found.retain(|(_, v)| !v.is_empty());
    found
}

/// Whether this system shows a process the environment its ancestors were
/// started with ([`agent_env_vars`]): Linux's `/proc` does.
pub fn agent_env_readable() -> bool {
    std::path::Path::new("/proc/self/environ").exists()
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
    fn neither_a_shell_nor_our_npm_launcher_is_the_agent() {
        let args = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert!(may_be_agent(&args(
            "node /usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js"
        )));
        assert!(!may_be_agent(&args(
            "/bin/bash -c report-prompt --cli gemini"
        )));
        assert!(!may_be_agent(&args(
            "node /usr/local/lib/node_modules/needs-you/bin/report-prompt.js --cli gemini"
        )));
        assert!(!may_be_agent(&[]));
    }

    #[test]
    fn this_test_runs_under_no_codex_server() {
        assert!(!under_shared_codex_server());
    }
}
