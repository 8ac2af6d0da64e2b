//! The client's connection to the app-server and what it keeps: its calls
//! and the server's requests by JSON-RPC id, the threads it follows, the
//! approvals listed and waiting; writing to the server, which only the main
//! loop does; and the pipes that wake that loop.

use std::collections::{HashMap, HashSet};
use std::io::ErrorKind;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;

use needs_you_core::classify::Takeable;
use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

use crate::afar::waiters::{self, DialogEnd};
use crate::error::Error;
use crate::send::Target;
use crate::state::StateDir;

/// What a call of ours was for, to read its result.
pub(super) enum Call {
    Nothing,
    Loaded,
    Resume(String),
}

/// A thread the TUI's server runs: the person's, or a subagent's.
pub(super) struct Thread {
    pub(super) cwd: Option<String>,
    /// A subagent's thread (it has a parent), or an ephemeral one: left to
    /// the terminal.
    pub(super) not_the_person_s: bool,
}

/// An approval listed, waiting for its answer.
pub(super) struct Pending {
    pub(super) session: String,
    pub(super) method: String,
    pub(super) params: Value,
    pub(super) seq: u64,
    /// What its question takes from afar, to wait again after an answer
    /// that could not be sent.
    pub(super) takeable: Takeable,
    /// Written to when the request is resolved elsewhere: the waiter ends.
    pub(super) resolved: OwnedFd,
}

/// An answer a waiter was handed, for the main loop to send.
pub(super) struct Handed {
    pub(super) to: Awaited,
    pub(super) answered: waiters::Answered,
}

/// What a waiter waited for.
pub(super) enum Awaited {
    /// The answer to a request of the server's, by its id.
    Request(RequestId),
    /// The person's message to a thread's open reply.
    Message(OpenReply),
}

/// A reply open in one of the person's threads, waiting for their message:
/// the thread, and the `seq` of the reply's open.
pub(super) struct OpenReply {
    pub(super) thread: String,
    pub(super) seq: u64,
}

/// A JSON-RPC id, as it came: a number or a string. An answer names its
/// request by the very id the server gave, never by a copy written out and
/// read back.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum RequestId {
    Number(serde_json::Number),
    Text(String),
}

impl RequestId {
    /// The id of a message; `None` for one that is neither.
    pub(super) fn of(id: &Value) -> Option<RequestId> {
        match id {
            Value::Number(n) => Some(RequestId::Number(n.clone())),
            Value::String(s) => Some(RequestId::Text(s.clone())),
            _ => None,
        }
    }

    pub(super) fn to_json(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::Number(n.clone()),
            RequestId::Text(s) => Value::String(s.clone()),
        }
    }
}

pub(super) struct Client<'a> {
    pub(super) ws: WebSocket<UnixStream>,
    pub(super) dir: &'a StateDir,
    pub(super) target: Target,
    pub(super) next_id: u64,
    pub(super) calls: HashMap<RequestId, Call>,
    pub(super) threads: HashMap<String, Thread>,
    pub(super) subscribed: HashSet<String>,
    /// The changes of each file change item seen, by item id: the approval
    /// names only the item.
    pub(super) changes: HashMap<String, Value>,
    /// The approvals listed and not yet answered or resolved, by request id.
    pub(super) pending: HashMap<RequestId, Pending>,
    /// The threads whose reply waits for a message, each with the end its
    /// waiter sleeps on: written to when a turn starts there first.
    pub(super) messages: HashMap<String, OwnedFd>,
    pub(super) handed_tx: mpsc::Sender<Handed>,
    pub(super) wake_tx: std::sync::Arc<OwnedFd>,
}

pub(super) fn str_field<'a>(v: &'a Value, field: &str) -> Option<&'a str> {
    v.get(field).and_then(Value::as_str)
}

impl Client<'_> {
    pub(super) fn send(&mut self, msg: &Value) -> Result<(), Error> {
        // The socket is non-blocking: a frame that did not go at once goes
        // with the next flush, and these are small.
        match self.ws.send(Message::text(msg.to_string())) {
            Ok(()) => Ok(()),
            Err(tungstenite::Error::Io(e)) if e.kind() == ErrorKind::WouldBlock => {
                self.flush_blocking()
            }
            Err(e) => Err(Error::Protocol(format!(
                "cannot write to the app-server: {e}"
            ))),
        }
    }

    pub(super) fn flush_blocking(&mut self) -> Result<(), Error> {
        let _ = self.ws.get_ref().set_nonblocking(false);
        let flushed = self.ws.flush();
        let _ = self.ws.get_ref().set_nonblocking(true);
        flushed.map_err(|e| Error::Protocol(format!("cannot write to the app-server: {e}")))
    }

    pub(super) fn call(&mut self, method: &str, params: Value, call: Call) -> Result<(), Error> {
        self.next_id += 1;
        let id = format!("needs-you-{}", self.next_id);
        self.calls.insert(RequestId::Text(id.clone()), call);
        self.send(&json!({"id": id, "method": method, "params": params}))
    }

    pub(super) fn notify(&mut self, method: &str) -> Result<(), Error> {
        self.send(&json!({ "method": method }))
    }
}

/// A waiter's end that the main loop writes to when its request resolved.
pub(super) struct Resolved(pub(super) OwnedFd);

impl DialogEnd for Resolved {
    fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    fn over(&mut self) -> bool {
        true
    }
}

/// A pipe: its reading end, then its writing end.
pub(super) fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both were just opened and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Makes a pipe's reading end readable.
pub(super) fn poke(fd: RawFd) {
    // SAFETY: writes one byte from a live buffer.
    let _ = unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) };
}

pub(super) fn drain(fd: RawFd) {
    let mut buf = [0u8; 64];
    // SAFETY: reads into a buffer of the length given.
    while unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_answered_under_the_very_id_it_came_with() {
        for id in [
            json!(7),
            json!(18446744073709551615u64),
            json!("needs-you-3"),
        ] {
            let got = RequestId::of(&id).unwrap();
            assert_eq!(got.to_json(), id);
        }
        // A number and the string of its digits are two requests.
        assert_ne!(RequestId::of(&json!(7)), RequestId::of(&json!("7")));
        assert_eq!(RequestId::of(&Value::Null), None);
        assert_eq!(RequestId::of(&json!({"id": 1})), None);
    }

    #[test]
    fn a_poke_wakes_the_reading_end_until_it_is_drained() {
        let (rx, tx) = pipe().unwrap();
        let readable = |fd: RawFd| {
            let mut p = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one live pollfd.
            unsafe { libc::poll(&mut p, 1, 0) == 1 }
        };
        assert!(!readable(rx.as_raw_fd()));
        poke(tx.as_raw_fd());
        poke(tx.as_raw_fd());
        assert!(readable(rx.as_raw_fd()));
        drain(rx.as_raw_fd());
        assert!(!readable(rx.as_raw_fd()));
    }
}
