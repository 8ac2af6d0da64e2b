//! `needs-you __codex -- codex ARGS`: Codex's TUI against a private
//! app-server of its task, followed by a second client that lists its
//! approvals and answers them from afar ([`needs_you_reporter::afar::codex_client`]).
//!
//! `needs-you run -- codex` runs this as its command, in the person's
//! terminal or in the tmux session it made. In order:
//!
//! 1. a folder of the state directory, 0700, for the server's socket and log;
//! 2. `codex app-server --listen unix://FOLDER/app.sock`, with the task's
//!    environment (its hooks report with this task's credential, and no other
//!    terminal shares the server), in a process group of its own, so that the
//!    terminal's Ctrl-C goes to the TUI alone;
//! 3. the TUI, `codex --remote unix://FOLDER/app.sock ARGS`, in the terminal
//!    as it is; the second client joins once the TUI is connected;
//! 4. when the TUI ends, the server's whole group is ended (Codex leaves a
//!    `--remote` TUI's server running at `/quit`), and the folder removed.
//!
//! Without a task (the Worker was out of reach) or when the server does not
//! start, Codex runs as `codex --no-daemon ARGS`, watched by its hooks alone,
//! and a line says so.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use needs_you_reporter::afar::codex_client;
use needs_you_reporter::error::Error;
use needs_you_reporter::send::Target;
use needs_you_reporter::state::{self, StateDir};

use super::run;
use crate::fail::Result;

/// How long the server has to open its socket.
const STARTS_WITHIN: Duration = Duration::from_secs(15);
/// How long the server has to end at TERM before its group is killed.
const ENDS_WITHIN: Duration = Duration::from_secs(3);

pub fn run(command: Vec<OsString>) -> Result<i32> {
    let program = command[0].clone();
    let args = &command[1..];
    let started = Target::from_env().and_then(|target| {
        let dir = StateDir::open(state::resolve(None))
            .map_err(|e| Error::State(format!("state directory: {e}")))?;
        let server = Server::start(&program, &dir)?;
        Ok((server, dir, target))
    });
    let (server, dir, target) = match started {
        Ok(s) => s,
        Err(why) => {
            eprintln!("needs-you: {why}: Codex runs without answers from afar");
            let mut plain = vec![program, OsString::from("--no-daemon")];
            plain.extend_from_slice(args);
            return in_terminal(&plain, || ());
        }
    };
    let socket = server.socket.clone();
    std::thread::spawn(move || codex_client::follow(&socket, dir, target));
    let mut tui = vec![program, OsString::from("--remote"), server.address()];
    tui.extend_from_slice(args);
    in_terminal(&tui, || server.stop())
}

/// Runs `command` in this terminal, with signals forwarded as `run` does;
/// `then` runs once it ended, before the signals have their default back
/// (a hang-up must not end us half-way through it).
fn in_terminal(command: &[OsString], then: impl FnOnce()) -> Result<i32> {
    run::install_forwarding();
    let ended = run::here(&[], command);
    then();
    run::restore_defaults();
    run::finish(ended?)
}

/// The task's app-server.
struct Server {
    child: Child,
    folder: PathBuf,
    socket: PathBuf,
}

impl Server {
    /// Fails as the state directory's failure (its folder, its log) or the
    /// server's (it did not start, or did not open its socket).
    fn start(program: &OsStr, dir: &StateDir) -> std::result::Result<Server, Error> {
        let folder = dir.path().join(format!("codex-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&folder)
            .map_err(|e| Error::State(format!("cannot create {}: {e}", folder.display())))?;
        let socket = folder.join("app.sock");
        let log = std::fs::File::create(folder.join("server.log"))
            .map_err(|e| Error::State(format!("cannot create the server's log: {e}")))?;
        let mut listen = OsString::from("unix://");
        listen.push(&socket);
        let mut cmd = Command::new(program);
        for secret in run::OUR_SECRETS {
            cmd.env_remove(secret);
        }
        cmd.args([OsStr::new("app-server"), OsStr::new("--listen"), &listen])
            .env(codex_client::BRIDGED, "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .process_group(0);
        // Should this process die without ending it (a KILL), the server is
        // told at once: nothing else of the task would end it.
        // SAFETY: prctl is async-signal-safe, and takes no memory of ours.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| Error::Protocol(format!("cannot start Codex's app-server: {e}")))?;
        let mut server = Server {
            child,
            folder,
            socket,
        };
        let began = Instant::now();
        while UnixStream::connect(&server.socket).is_err() {
            let exited = server.child.try_wait().ok().flatten().is_some();
            if exited || began.elapsed() > STARTS_WITHIN {
                let why = if exited {
                    "ended"
                } else {
                    "did not open its socket"
                };
                server.stop();
                return Err(Error::Protocol(format!("Codex's app-server {why}")));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(server)
    }

    fn address(&self) -> OsString {
        let mut a = OsString::from("unix://");
        a.push(&self.socket);
        a
    }

    /// Ends the server and whatever it started (its group), then removes its
    /// folder. Codex removes the socket it linked to at TERM.
    fn stop(mut self) {
        let group = self.child.id() as i32;
        // SAFETY: signals to the process group we made for the server.
        unsafe { libc::kill(-group, libc::SIGTERM) };
        let began = Instant::now();
        while self.child.try_wait().ok().flatten().is_none() {
            if began.elapsed() > ENDS_WITHIN {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // SAFETY: as above; whatever of the group is left.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        let _ = self.child.wait();
        remove_link_target(&self.socket);
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// A killed server leaves the socket its path linked to: removed with it.
fn remove_link_target(link: &Path) {
    if let Ok(target) = std::fs::read_link(link) {
        use std::os::unix::fs::FileTypeExt;
        if std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_socket()) {
            let _ = std::fs::remove_file(target);
        }
    }
}
