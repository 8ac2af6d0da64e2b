//! With `--tmux`, outside tmux, the command runs in a new tmux session so that
//! answers can be typed into it. The credential reaches it through a private
//! file that the session's first process (`needs-you __exec`) reads and
//! deletes, never through a command line that `ps` would show.

use std::ffi::{OsStr, OsString};
use std::io::IsTerminal;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;

use needs_you_reporter::state::{now_micros, write_private};

use super::child::{finish, start, Ended, OUR_SECRETS};
use super::signals::{install_forwarding, CHILD, PENDING};
use crate::fail::{exit, Fail, Result};

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

pub(super) fn in_new_session(
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
