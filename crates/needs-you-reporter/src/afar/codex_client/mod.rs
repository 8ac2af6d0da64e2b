//! The second client of a Codex task's private app-server: it follows the
//! threads of the person's TUI, lists each approval, permissions request,
//! question (`request_user_input`) and MCP elicitation (a tool call's
//! approval, a server's form) the TUI shows as one that takes an answer
//! from afar, and answers it through the protocol when an answer comes
//! ([`needs_you_core::classify::codex_app`] says which requests, their
//! cards, and the answers).
//!
//! `needs-you run -- codex` starts the server, the TUI on `--remote`, and
//! this, in one process (`needs-you __codex`). For each approval of one of
//! the person's threads:
//!
//! 1. the question opens here and on the Worker like any other, with the
//!    request it covers (the card and digest are made from it) and the
//!    terminal it shows on; the `PermissionRequest` hook, which runs inside
//!    the same server, leaves the person's own approvals to this
//!    ([`BRIDGED`]);
//! 2. a waiter registers with the task's relay (`waiters::wait`), exactly as
//!    Claude Code's waiting hook does, so the relay's rules (this machine's
//!    own open, its `seq` and digest; an answer spent once) are the same;
//! 3. an answer handed over is sent as the protocol's answer only while the
//!    server has not said the request was resolved; the question then
//!    closes as answered. Resolved first (the person answered in the
//!    terminal), the waiter is let go, and a late answer fails.
//!
//! A reply (the turn's Stop hook opened it, with `messages` in its terminal)
//! is answered the same way: at the thread's `turn/completed` a message
//! waiter registers (`waiters::wait_for_message`), and the person's text goes to
//! the thread as its next turn (`turn/start`) while the thread is still idle.
//!
//! It never types a key, and never answers a request of a thread it did not
//! see the TUI's server start. A subagent's thread is left to the terminal.
//! Its failures go to the state directory's log.
//!
//! * `connection`: the connection to the app-server and what it keeps.
//! * `protocol`: the app-server's messages, read.
//! * `answers`: an approval's question opened, waited on, and answered down the one road.

mod answers;
mod connection;
mod protocol;

use std::collections::{HashMap, HashSet};
use std::io::ErrorKind;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::Message;

use crate::error::Error;
use crate::send::Target;
use crate::state::StateDir;
use connection::{drain, pipe, Call, Client};

/// Set in the app-server's environment: its `PermissionRequest` hooks leave
/// the person's own approvals to this client, which lists them answerable.
pub use crate::clis::{codex_bridged as bridged, CODEX_BRIDGED as BRIDGED};

/// How long to wait for the TUI to connect first: the first client to
/// initialize names the server's originator for every client.
const TUI_CONNECTS_WITHIN: Duration = Duration::from_secs(120);

/// Follows the server on `socket` until it goes away; its failures are
/// logged in `dir`.
pub fn follow(socket: &Path, dir: StateDir, target: Target) {
    if let Err(e) = follow_or_fail(socket, &dir, target) {
        dir.log(&format!("codex client: {e}"));
    }
}

fn follow_or_fail(socket: &Path, dir: &StateDir, target: Target) -> Result<(), Error> {
    let real = private_socket(socket)?;
    wait_for_first_client(&real)?;
    // The place checked, not the link, which could be pointed elsewhere since.
    let stream =
        UnixStream::connect(&real).map_err(|e| Error::Protocol(format!("cannot connect: {e}")))?;
    let (ws, _) = tungstenite::client("ws://localhost/", stream)
        .map_err(|e| Error::Protocol(format!("no WebSocket to the app-server: {e}")))?;
    ws.get_ref()
        .set_nonblocking(true)
        .map_err(|e| Error::Protocol(e.to_string()))?;
    let (wake_rx, wake_tx) =
        pipe().map_err(|e| Error::Protocol(format!("cannot make a pipe: {e}")))?;
    let (handed_tx, handed) = mpsc::channel();
    let mut client = Client {
        ws,
        dir,
        target,
        next_id: 0,
        calls: HashMap::new(),
        threads: HashMap::new(),
        subscribed: HashSet::new(),
        changes: HashMap::new(),
        pending: HashMap::new(),
        messages: HashMap::new(),
        handed_tx,
        wake_tx: std::sync::Arc::new(wake_tx),
    };
    client.call(
        "initialize",
        json!({"clientInfo": {"name": "needs-you", "version": env!("CARGO_PKG_VERSION")}}),
        Call::Nothing,
    )?;
    client.notify("initialized")?;
    client.call("thread/loaded/list", json!({}), Call::Loaded)?;
    loop {
        loop {
            match client.ws.read() {
                Ok(Message::Text(text)) => {
                    if let Ok(msg) = serde_json::from_str::<Value>(text.as_str()) {
                        client.on_message(&msg)?;
                    }
                }
                Ok(Message::Close(_)) => return Ok(()),
                Ok(_) => {}
                Err(tungstenite::Error::Io(e)) if e.kind() == ErrorKind::WouldBlock => break,
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    return Ok(())
                }
                Err(e) => {
                    return Err(Error::Protocol(format!(
                        "the app-server connection failed: {e}"
                    )))
                }
            }
        }
        while let Ok(h) = handed.try_recv() {
            client.on_handed(h)?;
        }
        // Asleep until the server speaks or a waiter is handed an answer.
        let mut fds = [
            libc::pollfd {
                fd: client.ws.get_ref().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake_rx.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `fds` is a live array of its length.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 && std::io::Error::last_os_error().kind() != ErrorKind::Interrupted {
            return Err(Error::Protocol("poll failed".into()));
        }
        if fds[1].revents != 0 {
            drain(wake_rx.as_raw_fd());
        }
    }
}

/// The socket's real place, checked to be the person's alone: Codex makes
/// the path it was given a link into a folder of its own
/// (`/tmp/codex-daemon-<uid>/…`), which must be ours and closed to others.
fn private_socket(socket: &Path) -> Result<PathBuf, Error> {
    let real = std::fs::canonicalize(socket).map_err(|e| {
        Error::Protocol(format!("cannot find the socket {}: {e}", socket.display()))
    })?;
    let uid = crate::state::uid();
    let folder = real
        .parent()
        .ok_or_else(|| Error::Protocol("the socket has no folder".into()))?;
    let (f, s) = (
        std::fs::metadata(folder).map_err(|e| Error::Protocol(e.to_string()))?,
        std::fs::symlink_metadata(&real).map_err(|e| Error::Protocol(e.to_string()))?,
    );
    if f.uid() != uid || f.mode() & 0o077 != 0 || s.uid() != uid {
        return Err(Error::Protocol(format!(
            "the app-server's socket {} is not private to this user: not connecting",
            real.display()
        )));
    }
    Ok(real)
}

/// Waits until a client (the TUI) is connected to the socket at `real`, as
/// `/proc/net/unix` lists the server's accepted connections.
fn wait_for_first_client(real: &Path) -> Result<(), Error> {
    let path = real.to_string_lossy().into_owned();
    let started = Instant::now();
    loop {
        let table = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
        // Columns: Num RefCount Protocol Flags Type St Inode Path; St 03 is connected.
        let connected = table.lines().any(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.len() >= 8 && cols[5] == "03" && cols[7] == path
        });
        if connected {
            // Its `initialize` follows its connect at once.
            std::thread::sleep(Duration::from_millis(300));
            return Ok(());
        }
        if started.elapsed() > TUI_CONNECTS_WITHIN {
            return Err(Error::Protocol(
                "the TUI never connected to its app-server".into(),
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::UnixListener;

    use super::*;

    #[test]
    fn only_a_socket_in_a_folder_closed_to_others_is_connected_to() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = tmp.path().join("codex-daemon");
        std::fs::create_dir(&folder).unwrap();
        let real = folder.join("app.sock");
        let _listening = UnixListener::bind(&real).unwrap();
        // The path Codex was given is a link into its folder.
        let link = tmp.path().join("given.sock");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(private_socket(&link).unwrap(), real.canonicalize().unwrap());
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        let refused = private_socket(&link).unwrap_err();
        assert!(
            refused.message().contains("not private to this user"),
            "{refused}"
        );
        assert!(private_socket(&tmp.path().join("none.sock")).is_err());
    }
}
