//! `needs-you run -- COMMAND`: the command runs as a task of its own.
//!
//! A task is created (its credential goes into the command's environment,
//! nowhere else), the command runs with the terminal as it is, and when it
//! exits the task is revoked, which closes its open questions. The command's
//! exit code is ours; a command killed by a signal kills us with the same
//! signal, so a shell sees what it would have seen without us.
//!
//! How signals reach the command is `signals`'s; how it runs in a tmux
//! session of its own, `tmux`'s.
//!
//! * `child`: the command as our child process, and its end as our exit.
//! * `signals`: signals passed on to the command while it runs.
//! * `tmux`: `--tmux`, the command in a tmux session of its own.

mod child;
mod signals;
mod tmux;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use serde_json::json;

use needs_you_core::Cli;

use needs_you_core::api::{NewTask, MAX_TASK_NAME_CHARS};
use needs_you_reporter::client::FailureKind;
pub use needs_you_reporter::program::find_program;

use super::logged_in;
use crate::cli::RunOptions;
use crate::content_keys;
use crate::fail::{exit, Fail, Result};
use needs_you_core::sealed::field;
use needs_you_trust::sealing::{seal, ContentKeys};

pub use child::Ended;
pub use child::OUR_SECRETS;
pub(crate) use child::{finish, here};
use signals::ELSEWHERE;
pub(crate) use signals::{install_forwarding, restore_defaults};
use tmux::in_new_session;
pub use tmux::{exec, session_name};

/// The agent CLI a command starts, by its program's name.
pub fn known_agent(program: &OsStr) -> Option<Cli> {
    Cli::of_program(Path::new(program).file_name()?.to_str()?)
}

/// The command as it is run for its task. Codex's TUI runs against a
/// private app-server of the task's, so that its approvals can be answered
/// from afar (`needs-you __codex`, which `me` names: this program). Any
/// other Codex command runs with `--no-daemon` (which its every subcommand
/// accepts before its name): Codex otherwise runs its hooks inside one
/// shared background server started with the environment of whichever
/// terminal started it first, another task's credential or none, and the
/// reporter rightly refuses to report from there. A person who chose a
/// server (`--remote`) or said `--no-daemon` gets Codex as they said.
pub fn agent_command(command: &[OsString], me: &Path) -> Vec<OsString> {
    let mut command = command.to_vec();
    let chose = |flag: &str| {
        command[1..]
            .iter()
            .any(|a| a == flag || a.to_string_lossy().starts_with(&format!("{flag}=")))
    };
    if known_agent(&command[0]) != Some(Cli::Codex) || chose("--no-daemon") || chose("--remote") {
        return command;
    }
    let args: Vec<String> = command[1..]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if needs_you_core::classify::codex_app::runs_its_tui(&args) {
        let mut wrapped = vec![me.as_os_str().to_owned(), "__codex".into(), "--".into()];
        wrapped.extend(command);
        return wrapped;
    }
    command.insert(1, OsString::from("--no-daemon"));
    command
}

/// The native `report-prompt` beside this `needs-you` (both come in one
/// package, npm's or cargo's), unless the person named one already.
fn native_reporter() -> Option<String> {
    if std::env::var_os(needs_you_reporter::REPORTER_VAR).is_some_and(|v| !v.is_empty()) {
        return None;
    }
    let me = std::env::current_exe().ok()?;
    let reporter = me
        .canonicalize()
        .unwrap_or(me)
        .with_file_name("report-prompt");
    find_program(reporter.as_os_str()).map(|p| p.to_string_lossy().into_owned())
}

/// "claude in api", from the program and the working directory.
pub fn default_name(program: &OsStr, cwd: &Path) -> String {
    let prog = Path::new(program)
        .file_name()
        .map_or("command".into(), |n| n.to_string_lossy().into_owned());
    match cwd.file_name() {
        Some(dir) => format!("{prog} in {}", dir.to_string_lossy()),
        None => prog,
    }
}

pub fn run(mut opts: RunOptions) -> Result<i32> {
    let (login, client) = logged_in()?;
    opts.no_screen |= needs_you_reporter::afar::relay::no_screen();
    let program = opts.command[0].clone();
    if find_program(&program).is_none() {
        return Err(Fail::new(
            exit::NOT_FOUND,
            format!("command not found: {}", program.to_string_lossy()),
        ));
    }
    if let Some(cli) = known_agent(&program) {
        if !needs_you_reporter::install::status(cli).reports() {
            let loads = match needs_you_reporter::install::status::loads(cli) {
                "plugin" => "plugin is",
                _ => "hooks are",
            };
            eprintln!(
                "needs-you: {}'s {loads} not installed, so it will not report; run `report-prompt install --cli {cli}`",
                cli.display_name(),
            );
        }
    }
    let in_tmux = std::env::var_os("TMUX").is_some_and(|t| !t.is_empty());
    let new_session = opts.tmux && !in_tmux;
    if new_session && find_program(OsStr::new("tmux")).is_none() {
        return Err(Fail::new(exit::NOT_FOUND, "--tmux: tmux is not installed"));
    }
    if login.owner.is_none() {
        eprintln!(
            "needs-you: this machine pinned no owner key, so its agents take no answer from afar and their questions reach the server readable; log in again with the line `needs-you pair` prints"
        );
    }
    if !opts.tmux && !in_tmux {
        eprintln!(
            "needs-you: not in tmux, so answers from the page cannot be typed into this terminal (`needs-you run --tmux` starts one)"
        );
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let name = opts.name.unwrap_or_else(|| default_name(&program, &cwd));
    // The content key, opened from what this machine's pairer wrapped to it
    // and kept beside the login, before an agent here has words to seal: the
    // task's name is the first (it names the folder). What went wrong is
    // said once the task is made: a server out of reach says so below.
    // Whenever this machine keeps a key, it seals, whatever the server says
    // of those it may hold since.
    let sealing = match (
        content_keys::on_this_device(&login, &client),
        content_keys::load().ok().flatten(),
    ) {
        (Ok(Some(keys)), _) | (_, Some(keys)) => Ok(Some(keys)),
        (fetched, None) => fetched,
    };
    let must_seal = content_keys::must_seal(&login);
    let seals_name = login.owner.is_some() && (must_seal || matches!(sealing, Ok(Some(_))));
    let name = needs_you_core::text::line(&name);
    if name.chars().count() > MAX_TASK_NAME_CHARS {
        return Err(Fail::new(
            exit::USAGE,
            format!("--name: a task's name is at most {MAX_TASK_NAME_CHARS} characters"),
        ));
    }
    let mut asked = json!({"expires_in_s": opts.expires_s, "screen": !opts.no_screen});
    if seals_name {
        asked["name_sealed"] = json!(true);
    } else {
        asked["name"] = json!(name);
    }
    let created = client.post::<NewTask>("/v1/tasks", &asked);
    // A server out of reach never keeps a person from starting their agent:
    // it runs unwatched, and says so once. A refusal (a device without the
    // right to start tasks) is a set-up to fix, and stops here.
    let task = match created {
        Ok(task) => Some(task),
        Err(f) if matches!(f.kind, FailureKind::Unreachable | FailureKind::Server) => {
            eprintln!(
                "needs-you: {} is out of reach ({}): starting {} unwatched",
                client.base(),
                f.message,
                program.to_string_lossy()
            );
            None
        }
        Err(f) => return Err(f.into()),
    };
    if let (Some(t), Some(seconds)) = (&task, opts.mute) {
        // A task that cannot be muted still runs: the person is told.
        if let Err(f) = super::questions::mute_task(&client, &t.task_id, seconds) {
            eprintln!(
                "needs-you: could not mute the task ({}); it rings as usual",
                f.message
            );
        }
    }
    // A machine the content key has not reached yet still runs its agent,
    // showing no screen.
    let not_taken = sealing.is_err();
    let sealing = match task.is_some() {
        true => sealing.unwrap_or_else(|f| {
            eprintln!("needs-you: cannot take the content key ({})", f.message);
            None
        }),
        false => None,
    };
    // One that must seal and holds no key keeps its questions back (its
    // reporter and relay are still told where the key would be, and find
    // none) rather than send them readable.
    let keeps_back = task.is_some() && must_seal && sealing.is_none();
    if keeps_back {
        eprintln!(
            "needs-you: this machine holds no content key it can open, so its agent's questions are kept back rather than sent readable: {}",
            match not_taken {
                true => "start it again once the key can be taken",
                false => "log it in again with the line `needs-you pair` prints",
            }
        );
    } else if task.is_some() && login.owner.is_some() && sealing.is_none() {
        // Pinned the owner from a device's link: it checks answers, but
        // was given no key to seal with.
        eprintln!(
            "needs-you: this machine holds no content key (it logged in without the line `needs-you pair` prints), so its agents' questions reach the server readable; log it in again with that line"
        );
    }
    if let (Some(t), Some(keys), Some(owner), true) = (&task, &sealing, &login.owner, seals_name) {
        // A task that cannot be named still runs: the person is told.
        if let Err(why) = name_task(&client, keys, owner, &t.task_id, &name) {
            eprintln!("needs-you: could not name the task ({why}); it is listed without a name");
        }
    }
    let env: Vec<(&str, String)> = match &task {
        Some(t) => {
            let mut env = vec![
                (needs_you_reporter::send::URL_VAR, client.base().to_owned()),
                (needs_you_reporter::send::TOKEN_VAR, t.credential.clone()),
            ];
            // The relay takes only answers the pinned owner key signed.
            if let Some(owner) = &login.owner {
                env.push((needs_you_reporter::owner::OWNER_VAR, owner.clone()));
            }
            // The relay seals with it; the variable names the file, not the key.
            if sealing.is_some() || keeps_back {
                env.push((
                    needs_you_reporter::owner::KEYS_VAR,
                    content_keys::path().to_string_lossy().into_owned(),
                ));
            }
            // The agent's machine refuses screens too, whatever the server asks.
            if opts.no_screen {
                env.push((needs_you_reporter::NO_SCREEN_VAR, "1".to_owned()));
            }
            // The plugins' hooks run this report-prompt, not the PATH's,
            // which may be npm's launcher: a Node start at every event.
            if let Some(reporter) = native_reporter() {
                env.push((needs_you_reporter::REPORTER_VAR, reporter));
            }
            env
        }
        None => Vec::new(),
    };
    let me = std::env::current_exe().map_err(|e| Fail::new(exit::REFUSED, e.to_string()))?;
    let command = agent_command(&opts.command, &me);
    install_forwarding();
    let ended = if new_session {
        ELSEWHERE.store(true, Ordering::SeqCst);
        in_new_session(&name, &cwd, &env, &command)
    } else {
        here(&env, &command)
    };
    restore_defaults();
    let Some(task) = task else {
        return finish(ended?);
    };
    // Revoke whatever happened: the task's questions must not outlive it.
    if let Err(f) = client.delete::<serde_json::Value>(&format!("/v1/tasks/{}", task.task_id)) {
        eprintln!(
            "needs-you: could not revoke the task {name:?} ({}); it expires by itself in {}",
            f.message,
            super::human(opts.expires_s)
        );
    }
    finish(ended?)
}

/// Names task `task_id` with `name` sealed under the newest version of
/// `keys`, as `owner`'s, for that task ([`field::TASK`]): the server keeps
/// the name as a blob the devices open.
fn name_task(
    client: &needs_you_reporter::client::Client,
    keys: &ContentKeys,
    owner: &str,
    task_id: &str,
    name: &str,
) -> Result<()> {
    let key = keys
        .newest()
        .ok_or_else(|| Fail::new(exit::REFUSED, "no content key"))?;
    let sealed = seal(key, owner, task_id, field::TASK, name.as_bytes())
        .map_err(|e| Fail::new(exit::REFUSED, e.to_string()))?;
    client.put::<serde_json::Value>(
        &format!("/v1/tasks/{}/name", super::path_part(task_id)?),
        &json!({ "sealed": sealed }),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_agents() {
        assert_eq!(
            default_name(OsStr::new("/usr/bin/claude"), Path::new("/home/a/api")),
            "claude in api"
        );
        assert_eq!(known_agent(OsStr::new("/opt/bin/codex")), Some(Cli::Codex));
        let run = |args: &[&str]| -> Vec<String> {
            let command: Vec<OsString> = args.iter().map(OsString::from).collect();
            agent_command(&command, Path::new("/bin/needs-you"))
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        // The TUI, against a private app-server.
        assert_eq!(
            run(&["codex"]),
            ["/bin/needs-you", "__codex", "--", "codex"]
        );
        assert_eq!(
            run(&["/opt/bin/codex", "resume", "--last"]),
            [
                "/bin/needs-you",
                "__codex",
                "--",
                "/opt/bin/codex",
                "resume",
                "--last"
            ]
        );
        // Anything else of Codex's, without its shared server.
        assert_eq!(
            run(&["codex", "exec", "fix it"]),
            ["codex", "--no-daemon", "exec", "fix it"]
        );
        assert_eq!(run(&["codex", "--no-daemon"]), ["codex", "--no-daemon"]);
        assert_eq!(
            run(&["codex", "--remote", "unix:///s"]),
            ["codex", "--remote", "unix:///s"]
        );
        assert_eq!(run(&["claude", "-c"]), ["claude", "-c"], "only Codex");
        assert_eq!(known_agent(OsStr::new("vim")), None);
        let s = session_name("api refactor: v2.1");
        assert!(s.starts_with("api-refactor--v2-1-"), "{s}");
        assert!(!s.contains('.') && !s.contains(':'));
    }

    #[test]
    fn ends_survive_the_status_file() {
        for e in [Ended::Code(0), Ended::Code(3), Ended::Signal(15)] {
            assert_eq!(Ended::from_line(&e.to_line()), Some(e));
        }
        assert!(find_program(OsStr::new("sh")).is_some());
        assert!(find_program(OsStr::new("no-such-program-here")).is_none());
    }
}
