//! `needs-you run -- COMMAND`: the command runs as a task of its own.
//!
//! A task is created (its credential goes into the command's environment,
//! nowhere else), the command runs with the terminal as it is, and when it
//! exits the task is revoked, which closes its open questions. The command's
//! exit code is ours; a command killed by a signal kills us with the same
//! signal, so a shell sees what it would have seen without us.
//!
//! Signals: a Ctrl-C from the terminal reaches the command by itself (it is
//! in the terminal's foreground group with us), so we forward only what
//! another process sent us (`kill`), told apart by `si_code`; forwarding the
//! terminal's too would give the command every Ctrl-C twice, which an agent
//! may read as "quit". A hang-up is passed on whoever sent it: a
//! pseudo-terminal's reaches its session's leader alone, which we are as a
//! tmux pane's first process, and an agent left without it outlives its
//! closed pane. A command in a tmux session of its own
//! is in another terminal: it gets our terminal's Ctrl-C and Ctrl-\ from us
//! (after a detach, needs-you still waits in the foreground), but never a
//! hang-up, which tmux is there to survive. Once the command has ended, the
//! signals have their default back: a Ctrl-C during the revoke ends us.
//!
//! With `--tmux`, outside tmux, the command runs in a new tmux session so that
//! answers can be typed into it. The credential reaches it through a private
//! file that the session's first process (`needs-you __exec`) reads and
//! deletes, never through a command line that `ps` would show.

use std::ffi::{OsStr, OsString};
use std::io::IsTerminal;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

use serde_json::json;

use needs_you_core::Cli;

use needs_you_core::api::NewTask;
use needs_you_reporter::client::FailureKind;
use needs_you_reporter::state::{now_micros, write_private};

use super::logged_in;
use crate::cli::RunOptions;
use crate::fail::{exit, Fail, Result};

/// The process that signals are forwarded to (0: none yet).
static CHILD: AtomicI32 = AtomicI32::new(0);
/// Whether the command runs in a tmux session of its own, out of our
/// terminal's reach.
static ELSEWHERE: AtomicBool = AtomicBool::new(false);
/// A signal to forward that came before the command's pid was known (a tmux
/// session's first moments): sent once it is.
static PENDING: AtomicI32 = AtomicI32::new(0);

const FORWARDED: [libc::c_int; 4] = [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    // SI_USER (0) and SI_QUEUE (< 0): another process. The terminal's
    // Ctrl-C and Ctrl-\ (SI_KERNEL, > 0) reached the command's group
    // already, unless the command is in tmux. A pseudo-terminal's hang-up
    // reaches its session's leader alone, which we may be (a tmux pane's
    // first process): passed on, unless the command is in a tmux of its own,
    // which is there to survive it.
    let from_terminal = code > 0;
    let in_tmux = ELSEWHERE.load(Ordering::SeqCst);
    let elsewhere = in_tmux && sig != libc::SIGHUP;
    let hung_up = sig == libc::SIGHUP && !in_tmux;
    let pid = CHILD.load(Ordering::SeqCst);
    if !from_terminal || elsewhere || hung_up {
        if pid > 0 {
            // SAFETY: kill is async-signal-safe.
            unsafe { libc::kill(pid, sig) };
        } else {
            PENDING.store(sig, Ordering::SeqCst);
        }
    }
}

pub(crate) fn install_forwarding() {
    for sig in FORWARDED {
        // SAFETY: a zeroed sigaction with a valid handler and an empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The default action back, once there is no command to forward to.
pub(crate) fn restore_defaults() {
    for sig in FORWARDED {
        // SAFETY: the default disposition is always valid.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Code(i32),
    Signal(i32),
}

impl Ended {
    fn of(status: ExitStatus) -> Ended {
        match (status.code(), status.signal()) {
            (Some(c), _) => Ended::Code(c),
            (None, Some(s)) => Ended::Signal(s),
            _ => Ended::Code(1),
        }
    }

    fn to_line(self) -> String {
        match self {
            Ended::Code(c) => format!("code {c}"),
            Ended::Signal(s) => format!("signal {s}"),
        }
    }

    fn from_line(line: &str) -> Option<Ended> {
        let (kind, n) = line.trim().split_once(' ')?;
        let n = n.parse().ok()?;
        match kind {
            "code" => Some(Ended::Code(n)),
            "signal" => Some(Ended::Signal(n)),
            _ => None,
        }
    }
}

/// The agent CLI a command starts, by its program's name.
pub fn known_agent(program: &OsStr) -> Option<Cli> {
    let name = Path::new(program).file_name()?.to_str()?;
    match name {
        "claude" => Some(Cli::ClaudeCode),
        "codex" => Some(Cli::Codex),
        "opencode" => Some(Cli::Opencode),
        "hermes" => Some(Cli::Hermes),
        _ => None,
    }
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

/// The program's path, as `exec` would find it (`None`: not found).
pub fn find_program(program: &OsStr) -> Option<PathBuf> {
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let p = Path::new(program);
    if p.components().count() > 1 {
        return executable(p).then(|| p.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(p))
        .find(|c| executable(c))
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
    let (_, client) = logged_in()?;
    opts.no_screen |= needs_you_reporter::relay::no_screen();
    let program = opts.command[0].clone();
    if find_program(&program).is_none() {
        return Err(Fail::new(
            exit::NOT_FOUND,
            format!("command not found: {}", program.to_string_lossy()),
        ));
    }
    if let Some(cli) = known_agent(&program) {
        if !needs_you_reporter::install::is_installed(cli) {
            eprintln!(
                "needs-you: {}'s {} not installed, so it will not report; run `report-prompt install --cli {cli}`",
                cli.display_name(),
                if matches!(cli, Cli::Opencode | Cli::Hermes) { "plugin is" } else { "hooks are" }
            );
        }
    }
    let in_tmux = std::env::var_os("TMUX").is_some_and(|t| !t.is_empty());
    let new_session = opts.tmux && !in_tmux;
    if new_session && find_program(OsStr::new("tmux")).is_none() {
        return Err(Fail::new(exit::NOT_FOUND, "--tmux: tmux is not installed"));
    }
    if !opts.tmux && !in_tmux {
        eprintln!(
            "needs-you: not in tmux, so answers from the page cannot be typed into this terminal (`needs-you run --tmux` starts one)"
        );
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let name = opts.name.unwrap_or_else(|| default_name(&program, &cwd));
    let created = client.post::<NewTask>(
        "/v1/tasks",
        &json!({"name": name, "expires_in_s": opts.expires_s, "screen": !opts.no_screen}),
    );
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
    let env: Vec<(&str, String)> = match &task {
        Some(t) => {
            let mut env = vec![
                ("NEEDS_YOU_URL", client.base().to_owned()),
                ("NEEDS_YOU_TOKEN", t.credential.clone()),
            ];
            // The agent's machine refuses screens too, whatever the server asks.
            if opts.no_screen {
                env.push(("NEEDS_YOU_NO_SCREEN", "1".to_owned()));
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
fn start<K: AsRef<OsStr>, V: AsRef<OsStr>>(
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

/// A private folder for the hand-over to the tmux session.
fn handover_dir() -> Result<PathBuf> {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let nonce = now_micros();
    let dir = base.join(format!("needs-you-run-{}-{nonce}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| {
            Fail::new(
                exit::REFUSED,
                format!("cannot create {}: {e}", dir.display()),
            )
        })?;
    Ok(dir)
}

/// A tmux session name from the task's: tmux refuses `.` and `:` in them.
pub fn session_name(task: &str) -> String {
    let clean: String = task
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    format!("{clean}-{:04x}", now_micros() & 0xffff)
}

/// tmux, without [`OUR_SECRETS`]: a tmux server it starts keeps its
/// environment for every pane it ever opens.
fn tmux(args: &[&OsStr]) -> std::io::Result<std::process::Child> {
    let mut cmd = Command::new("tmux");
    for secret in OUR_SECRETS {
        cmd.env_remove(secret);
    }
    cmd.args(args).spawn()
}

fn in_new_session(
    task: &str,
    cwd: &Path,
    env: &[(&str, String)],
    command: &[OsString],
) -> Result<Ended> {
    let dir = handover_dir()?;
    let env_file = dir.join("env");
    let status_file = dir.join("status");
    let pid_file = dir.join("pid");
    let text: String = env.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    write_private(&env_file, text).map_err(|e| Fail::new(exit::REFUSED, e.to_string()))?;
    let me = std::env::current_exe().map_err(|e| Fail::new(exit::REFUSED, e.to_string()))?;
    let session = session_name(task);
    let attached = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let mut args: Vec<&OsStr> = vec![OsStr::new("new-session")];
    if !attached {
        args.push(OsStr::new("-d"));
    }
    args.extend([
        OsStr::new("-s"),
        OsStr::new(&session),
        OsStr::new("-c"),
        cwd.as_os_str(),
    ]);
    args.extend([
        me.as_os_str(),
        OsStr::new("__exec"),
        env_file.as_os_str(),
        status_file.as_os_str(),
        OsStr::new("--"),
    ]);
    args.extend(command.iter().map(OsString::as_os_str));
    if !attached {
        eprintln!("needs-you: running in the tmux session {session} (tmux attach -t {session})");
    }
    // The command's pid, once its session has written it: signals go there.
    let note_pid = || {
        if CHILD.load(Ordering::SeqCst) == 0 {
            if let Some(pid) = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|p| p.trim().parse().ok())
            {
                CHILD.store(pid, Ordering::SeqCst);
                let sig = PENDING.swap(0, Ordering::SeqCst);
                if sig != 0 {
                    // SAFETY: a signal to the command we started.
                    unsafe { libc::kill(pid, sig) };
                }
            }
        }
    };
    // Attached, the tmux client runs until the person detaches or the
    // command ends: the pid is looked for meanwhile.
    let started = tmux(&args).and_then(|mut client| loop {
        note_pid();
        match client.try_wait()? {
            Some(status) => break Ok(status),
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    });
    let ended = match started {
        Ok(s) if s.success() || attached => {
            // Detached from, or started in the background: the session lives
            // on until the command exits.
            let target = format!("={session}");
            loop {
                note_pid();
                let alive = Command::new("tmux")
                    .args(["has-session", "-t", &target])
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                if !alive {
                    break;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            std::fs::read_to_string(&status_file)
                .ok()
                .and_then(|l| Ended::from_line(&l))
                .unwrap_or(Ended::Code(1))
        }
        _ => Ended::Code(1),
    };
    CHILD.store(0, Ordering::SeqCst);
    let _ = std::fs::remove_dir_all(&dir);
    if matches!(started, Ok(ref s) if !s.success() && !attached) || started.is_err() {
        return Err(Fail::new(exit::REFUSED, "tmux could not start the session"));
    }
    Ok(ended)
}

/// `__exec ENV_FILE STATUS_FILE -- COMMAND`: the tmux session's first process.
pub fn exec(env_file: &str, status_file: &str, command: Vec<OsString>) -> Result<i32> {
    let env_path = Path::new(env_file);
    let text = std::fs::read_to_string(env_path).map_err(|e| {
        Fail::new(
            exit::REFUSED,
            format!("cannot read the task's environment: {e}"),
        )
    })?;
    let _ = std::fs::remove_file(env_path);
    let env: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    install_forwarding();
    let mut child = start(&command, env)?;
    let pid_file = env_path.with_file_name("pid");
    let _ = write_private(&pid_file, child.id().to_string());
    let ended = child.wait().map(Ended::of).unwrap_or(Ended::Code(1));
    let _ = write_private(Path::new(status_file), ended.to_line());
    finish(ended)
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
