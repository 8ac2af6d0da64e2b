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
//! 2. a waiter registers with the task's relay (`afar::wait`), exactly as
//!    Claude Code's waiting hook does, so the relay's rules (this machine's
//!    own open, its `seq` and digest; an answer spent once) are the same;
//! 3. an answer handed over is sent as the protocol's answer only while the
//!    server has not said the request was resolved; the question then
//!    closes as answered. Resolved first (the person answered in the
//!    terminal), the waiter is let go, and a late answer fails.
//!
//! A reply (the turn's Stop hook opened it, with `messages` in its terminal)
//! is answered the same way: at the thread's `turn/completed` a message
//! waiter registers (`afar::wait_for_message`), and the person's text goes to
//! the thread as its next turn (`turn/start`) while the thread is still idle.
//!
//! It never types a key, and never answers a request of a thread it did not
//! see the TUI's server start. A subagent's thread is left to the terminal.
//! Its failures go to the state directory's log.

use std::collections::{HashMap, HashSet};
use std::io::ErrorKind;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use needs_you_core::afar::AnswerBody;
use needs_you_core::classify::{codex_app, Takeable};
use needs_you_core::{Cli, CloseReason, Kind, Report};
use serde_json::{json, Value};
use tungstenite::{Message, WebSocket};

use crate::afar::{self, DialogEnd};
use crate::handover::{self, Closing, Outcome, Taker};
use crate::questions;
use crate::relay;
use crate::send::Target;
use crate::state::{Opening, StateDir};
use crate::terminal;

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

fn follow_or_fail(socket: &Path, dir: &StateDir, target: Target) -> Result<(), String> {
    let real = private_socket(socket)?;
    wait_for_first_client(&real)?;
    // The place checked, not the link, which could be pointed elsewhere since.
    let stream = UnixStream::connect(&real).map_err(|e| format!("cannot connect: {e}"))?;
    let (ws, _) = tungstenite::client("ws://localhost/", stream)
        .map_err(|e| format!("no WebSocket to the app-server: {e}"))?;
    ws.get_ref()
        .set_nonblocking(true)
        .map_err(|e| e.to_string())?;
    let (wake_rx, wake_tx) = pipe().map_err(|e| format!("cannot make a pipe: {e}"))?;
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
                Err(e) => return Err(format!("the app-server connection failed: {e}")),
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
            return Err("poll failed".into());
        }
        if fds[1].revents != 0 {
            drain(wake_rx.as_raw_fd());
        }
    }
}

/// The socket's real place, checked to be the person's alone: Codex makes
/// the path it was given a link into a folder of its own
/// (`/tmp/codex-daemon-<uid>/…`), which must be ours and closed to others.
fn private_socket(socket: &Path) -> Result<PathBuf, String> {
    let real = std::fs::canonicalize(socket)
        .map_err(|e| format!("cannot find the socket {}: {e}", socket.display()))?;
    let uid = crate::state::uid();
    let folder = real.parent().ok_or("the socket has no folder")?;
    let (f, s) = (
        std::fs::metadata(folder).map_err(|e| e.to_string())?,
        std::fs::symlink_metadata(&real).map_err(|e| e.to_string())?,
    );
    if f.uid() != uid || f.mode() & 0o077 != 0 || s.uid() != uid {
        return Err(format!(
            "the app-server's socket {} is not private to this user: not connecting",
            real.display()
        ));
    }
    Ok(real)
}

/// Waits until a client (the TUI) is connected to the socket at `real`, as
/// `/proc/net/unix` lists the server's accepted connections.
fn wait_for_first_client(real: &Path) -> Result<(), String> {
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
            return Err("the TUI never connected to its app-server".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What a call of ours was for, to read its result.
enum Call {
    Nothing,
    Loaded,
    Resume(String),
}

/// A thread the TUI's server runs: the person's, or a subagent's.
struct Thread {
    cwd: Option<String>,
    /// A subagent's thread (it has a parent), or an ephemeral one: left to
    /// the terminal.
    not_the_person_s: bool,
}

/// An approval listed, waiting for its answer.
struct Pending {
    session: String,
    method: String,
    params: Value,
    seq: u64,
    /// What its question takes from afar, to wait again after an answer
    /// that could not be sent.
    takeable: Takeable,
    /// Written to when the request is resolved elsewhere: the waiter ends.
    resolved: OwnedFd,
}

/// An answer a waiter was handed, for the main loop to send.
struct Handed {
    to: Awaited,
    answered: afar::Answered,
}

/// What a waiter waited for.
enum Awaited {
    /// The answer to a request of the server's, by its id.
    Request(String),
    /// The person's message to a thread's open reply.
    Message(OpenReply),
}

/// A reply open in one of the person's threads, waiting for their message:
/// the thread, and the `seq` of the reply's open.
struct OpenReply {
    thread: String,
    seq: u64,
}

struct Client<'a> {
    ws: WebSocket<UnixStream>,
    dir: &'a StateDir,
    target: Target,
    next_id: u64,
    calls: HashMap<String, Call>,
    threads: HashMap<String, Thread>,
    subscribed: HashSet<String>,
    /// The changes of each file change item seen, by item id: the approval
    /// names only the item.
    changes: HashMap<String, Value>,
    /// The approvals listed and not yet answered or resolved, by request id.
    pending: HashMap<String, Pending>,
    /// The threads whose reply waits for a message, each with the end its
    /// waiter sleeps on: written to when a turn starts there first.
    messages: HashMap<String, OwnedFd>,
    handed_tx: mpsc::Sender<Handed>,
    wake_tx: std::sync::Arc<OwnedFd>,
}

fn str_field<'a>(v: &'a Value, field: &str) -> Option<&'a str> {
    v.get(field).and_then(Value::as_str)
}

/// A JSON-RPC id as a key: the server's are numbers or strings.
fn key(id: &Value) -> String {
    id.to_string()
}

impl Client<'_> {
    fn send(&mut self, msg: &Value) -> Result<(), String> {
        // The socket is non-blocking: a frame that did not go at once goes
        // with the next flush, and these are small.
        match self.ws.send(Message::text(msg.to_string())) {
            Ok(()) => Ok(()),
            Err(tungstenite::Error::Io(e)) if e.kind() == ErrorKind::WouldBlock => {
                self.flush_blocking()
            }
            Err(e) => Err(format!("cannot write to the app-server: {e}")),
        }
    }

    fn flush_blocking(&mut self) -> Result<(), String> {
        let _ = self.ws.get_ref().set_nonblocking(false);
        let flushed = self.ws.flush();
        let _ = self.ws.get_ref().set_nonblocking(true);
        flushed.map_err(|e| format!("cannot write to the app-server: {e}"))
    }

    fn call(&mut self, method: &str, params: Value, call: Call) -> Result<(), String> {
        self.next_id += 1;
        let id = format!("needs-you-{}", self.next_id);
        self.calls.insert(key(&json!(id)), call);
        self.send(&json!({"id": id, "method": method, "params": params}))
    }

    fn notify(&mut self, method: &str) -> Result<(), String> {
        self.send(&json!({ "method": method }))
    }

    fn on_message(&mut self, msg: &Value) -> Result<(), String> {
        let method = msg.get("method").and_then(Value::as_str);
        let params = msg.get("params").unwrap_or(&Value::Null);
        match (method, msg.get("id")) {
            // A request of the server's to its clients.
            (Some(method), Some(id)) => self.on_request(method, id, params),
            (Some(method), None) => self.on_notification(method, params),
            (None, Some(id)) => self.on_result(id, msg),
            (None, None) => Ok(()),
        }
    }

    fn on_result(&mut self, id: &Value, msg: &Value) -> Result<(), String> {
        match self.calls.remove(&key(id)) {
            Some(Call::Loaded) => {
                let ids: Vec<String> = msg
                    .pointer("/result/data")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.as_str().map(str::to_owned))
                    .collect();
                for id in ids {
                    self.resume(&id)?;
                }
            }
            Some(Call::Resume(thread)) => match msg.pointer("/result/thread") {
                Some(t) => {
                    self.learn_thread(t);
                    // Changes already made known before we followed.
                    for item in t
                        .get("turns")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .flat_map(|turn| turn.get("items").and_then(Value::as_array))
                        .flatten()
                    {
                        self.learn_item(item);
                    }
                }
                // A thread without a first turn cannot be followed yet: it
                // is tried again when it turns active.
                None => {
                    self.subscribed.remove(&thread);
                }
            },
            Some(Call::Nothing) | None => {}
        }
        Ok(())
    }

    fn resume(&mut self, thread: &str) -> Result<(), String> {
        if !self.subscribed.insert(thread.to_owned()) {
            return Ok(());
        }
        // The thread id alone: any other field would change the person's settings.
        self.call(
            "thread/resume",
            json!({ "threadId": thread }),
            Call::Resume(thread.to_owned()),
        )
    }

    fn learn_thread(&mut self, t: &Value) {
        let Some(id) = t.get("id").and_then(Value::as_str) else {
            return;
        };
        let set = |k: &str| {
            t.get(k)
                .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
        };
        self.threads.insert(
            id.to_owned(),
            Thread {
                cwd: t.get("cwd").and_then(Value::as_str).map(str::to_owned),
                // A subagent's, or a turn's short-lived helper.
                not_the_person_s: set("parentThreadId") || set("ephemeral"),
            },
        );
    }

    /// Keeps a file change's changes while it is in progress (its approval
    /// comes then), and forgets them once it is done.
    fn learn_item(&mut self, item: &Value) {
        if item.get("type").and_then(Value::as_str) != Some("fileChange") {
            return;
        }
        let Some(id) = item.get("id").and_then(Value::as_str) else {
            return;
        };
        match item.get("changes") {
            Some(changes) if str_field(item, "status") == Some("inProgress") => {
                self.changes.insert(id.to_owned(), changes.clone());
            }
            _ => {
                self.changes.remove(id);
            }
        }
    }

    fn on_notification(&mut self, method: &str, params: &Value) -> Result<(), String> {
        match method {
            "thread/started" => {
                if let Some(t) = params.get("thread") {
                    self.learn_thread(t);
                }
                Ok(())
            }
            // A thread at work can be followed (one that has a turn); a
            // message waiting for it would now start a second turn.
            "thread/status/changed" => {
                let active =
                    params.pointer("/status/type").and_then(Value::as_str) == Some("active");
                match params.get("threadId").and_then(Value::as_str) {
                    Some(thread) if active => {
                        self.stop_waiting_for_message(thread);
                        if self.is_the_person_s(thread) {
                            let thread = thread.to_owned();
                            self.resume(&thread)?;
                        }
                        Ok(())
                    }
                    _ => Ok(()),
                }
            }
            // The turn's Stop hook, which ran before this, opened the reply
            // if it asks: its answer comes back as the next turn.
            "turn/completed" => {
                if let Some(thread) = params.get("threadId").and_then(Value::as_str) {
                    let thread = thread.to_owned();
                    self.wait_for_message(&thread);
                }
                Ok(())
            }
            "item/started" | "item/completed" => {
                if let Some(item) = params.get("item") {
                    self.learn_item(item);
                }
                Ok(())
            }
            "serverRequest/resolved" => {
                if let Some(p) = params
                    .get("requestId")
                    .and_then(|id| self.pending.remove(&key(id)))
                {
                    // Answered elsewhere first: the waiter ends, and a late
                    // answer from afar finds nobody to take it.
                    poke(p.resolved.as_raw_fd());
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Whether `thread` is the person's own, as far as is known.
    fn is_the_person_s(&self, thread: &str) -> bool {
        !self.threads.get(thread).is_some_and(|t| t.not_the_person_s)
    }

    fn on_request(&mut self, method: &str, id: &Value, params: &Value) -> Result<(), String> {
        let name = format!("app_{}", method.replace('/', "_"));
        crate::record::named(
            Cli::Codex,
            &name,
            &serde_json::json!({"method": method, "params": params}),
        );
        let Some(thread) = codex_app::thread_of(params).map(str::to_owned) else {
            return Ok(());
        };
        // Only a thread this client follows, and the person's own.
        if !self.subscribed.contains(&thread) || !self.is_the_person_s(&thread) {
            return Ok(());
        }
        let changes = params
            .get("itemId")
            .and_then(Value::as_str)
            .and_then(|i| self.changes.get(i));
        let Some(asked) = codex_app::asked(method, params, changes) else {
            return Ok(());
        };
        let request_id = key(id);
        if self.pending.contains_key(&request_id) {
            return Ok(()); // sent again, as to a client that subscribed late
        }
        let cwd = self.threads.get(&thread).and_then(|t| t.cwd.clone());
        match self.open(&thread, cwd.as_deref(), asked) {
            Ok(Some((seq, takeable))) => {
                let (resolved_rx, resolved_tx) = pipe().map_err(|e| e.to_string())?;
                self.wait_for_answer(&thread, &request_id, takeable.clone(), resolved_rx);
                self.pending.insert(
                    request_id,
                    Pending {
                        session: thread,
                        method: method.to_owned(),
                        params: params.clone(),
                        seq,
                        takeable,
                        resolved: resolved_tx,
                    },
                );
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => {
                self.dir.log(&format!("codex client: {e}"));
                Ok(())
            }
        }
    }

    /// Opens the question of `asked` for `session`, in the terminal the TUI
    /// runs in; what it takes from afar, unless it is too large to carry.
    fn open(
        &self,
        session: &str,
        cwd: Option<&str>,
        asked: codex_app::Asked,
    ) -> Result<Option<(u64, Takeable)>, String> {
        let takeable = asked.takeable();
        let text = asked.text();
        let here = terminal::here(cwd, self.dir.path());
        let opening = Opening {
            kind: asked.kind,
            transcript: None,
            agent: None,
            digest: takeable.as_ref().map(|t| t.takes.digest.as_str()),
        };
        let mut opened = 0;
        questions::open(self.dir, &self.target, session, &opening, |seq| {
            opened = seq;
            Report::Open {
                cli: Cli::Codex,
                session: session.to_owned(),
                seq,
                kind: asked.kind,
                text: needs_you_core::truncate_chars(&text, 200),
                options: Vec::new(),
                terminal: Some(here.terminal.clone()),
                takes: takeable.as_ref().map(|t| t.takes.clone()),
                questions: takeable
                    .as_ref()
                    .map(|t| t.questions.clone())
                    .unwrap_or_default(),
                request: takeable.as_ref().map(|t| Box::new(t.request.clone())),
            }
        })?;
        // Show terminal, as for any question in a pane.
        match &here.pane {
            Some(pane) => relay::record_pane(
                self.dir.path(),
                session,
                &relay::PaneRecord {
                    task: relay::task_key(&self.target),
                    pane: pane.clone(),
                    cli: Some(Cli::Codex),
                },
            ),
            None => relay::forget_pane(self.dir.path(), session),
        }
        if takeable.is_some() {
            relay::ensure_relay(self.dir.path(), &self.target)?;
        }
        Ok(takeable.map(|t| (opened, t)))
    }

    /// A waiter of its own for the request, on a thread: what it is handed
    /// comes back to the main loop, which alone writes to the server.
    fn wait_for_answer(
        &self,
        session: &str,
        request_id: &str,
        takeable: Takeable,
        resolved: OwnedFd,
    ) {
        let socket = afar::socket_path(self.dir.path(), &relay::task_key(&self.target));
        let (session, request_id) = (session.to_owned(), request_id.to_owned());
        let (tx, wake) = (self.handed_tx.clone(), std::sync::Arc::clone(&self.wake_tx));
        std::thread::spawn(move || {
            let mut ended = Resolved(resolved);
            if let Some(answered) = afar::wait(&socket, &session, &takeable, Some(&mut ended)) {
                if tx
                    .send(Handed {
                        to: Awaited::Request(request_id),
                        answered,
                    })
                    .is_ok()
                {
                    poke(wake.as_raw_fd());
                }
            }
        });
    }

    /// A new waiter for the still pending `request_id`, whose last one was
    /// handed an answer that was not sent.
    fn wait_again(&mut self, request_id: &str) -> Result<(), String> {
        let (rx, tx) = pipe().map_err(|e| e.to_string())?;
        let Some(p) = self.pending.get_mut(request_id) else {
            return Ok(());
        };
        p.resolved = tx;
        let (session, takeable) = (p.session.clone(), p.takeable.clone());
        self.wait_for_answer(&session, request_id, takeable, rx);
        Ok(())
    }

    fn on_handed(&mut self, h: Handed) -> Result<(), String> {
        match h.to {
            Awaited::Request(id) => self.answer_request(&id, h.answered),
            Awaited::Message(reply) => self.send_message(reply, h.answered),
        }
    }

    /// Waits, on a thread of its own, for the person's message to the reply
    /// open here in `thread` (one of the person's), if one is.
    fn wait_for_message(&mut self, thread: &str) {
        // A turn's end replaces what an earlier one waited for.
        self.stop_waiting_for_message(thread);
        if !self.subscribed.contains(thread) || !self.is_the_person_s(thread) {
            return;
        }
        let seq = match self.dir.open_question(thread) {
            Ok(Some(q)) if q.kind == Kind::Reply => q.seq,
            _ => return,
        };
        let Ok((ended_rx, ended_tx)) = pipe() else {
            return;
        };
        self.messages.insert(thread.to_owned(), ended_tx);
        let socket = afar::socket_path(self.dir.path(), &relay::task_key(&self.target));
        let reply = OpenReply {
            thread: thread.to_owned(),
            seq,
        };
        let (tx, wake) = (self.handed_tx.clone(), std::sync::Arc::clone(&self.wake_tx));
        std::thread::spawn(move || {
            let mut ended = Resolved(ended_rx);
            if let Some(answered) = afar::wait_for_message(&socket, &reply.thread, Some(&mut ended))
            {
                let to = Awaited::Message(reply);
                if tx.send(Handed { to, answered }).is_ok() {
                    poke(wake.as_raw_fd());
                }
            }
        });
    }

    /// Lets go of the message waiter of `thread`, if there is one.
    fn stop_waiting_for_message(&mut self, thread: &str) {
        if let Some(end) = self.messages.remove(thread) {
            poke(end.as_raw_fd());
        }
    }

    /// The person's message, sent as the thread's next turn (a message to
    /// the model, never a command: the protocol runs no `/` or `!`) while
    /// the thread still waits for it, then taken, and the reply closes as
    /// answered; else let go (the relay reports that the agent did not take
    /// it).
    fn send_message(&mut self, reply: OpenReply, answered: afar::Answered) -> Result<(), String> {
        if self.messages.remove(&reply.thread).is_none() {
            return Ok(()); // a turn started there first
        }
        let AnswerBody::Text { text } = &answered.answer else {
            return Ok(());
        };
        let Ok(line) = needs_you_core::answer::check(text) else {
            return Ok(());
        };
        // Closed first, so the turn's own hooks find nothing of it open; and
        // only while it is still the open question: a prompt the person
        // submitted in the terminal closed it, and their turn goes alone.
        let still_open = questions::close_if_still_open(
            self.dir,
            Cli::Codex,
            &reply.thread,
            CloseReason::Answered,
            reply.seq,
        )?;
        if !still_open {
            return Ok(());
        }
        let input = json!([{"type": "text", "text": line, "text_elements": []}]);
        self.call(
            "turn/start",
            json!({"threadId": reply.thread, "input": input}),
            Call::Nothing,
        )?;
        answered.took();
        Ok(())
    }

    /// An answer handed over: sent as the protocol's answer while its
    /// request is still pending, and then taken; else let go (the relay
    /// reports that the agent did not take it).
    fn answer_request(&mut self, request_id: &str, answered: afar::Answered) -> Result<(), String> {
        let Some(p) = self.pending.get(request_id) else {
            return Ok(()); // resolved first: the terminal won
        };
        let (dir, task) = (self.dir, crate::relay::task_key(&self.target));
        let (session, takeable) = (p.session.clone(), p.takeable.clone());
        let mut taker = Answering {
            id: serde_json::from_str(request_id).unwrap_or(Value::Null),
            method: p.method.clone(),
            params: p.params.clone(),
            seq: p.seq,
            client: self,
        };
        match handover::deliver(dir, &task, &session, &takeable, answered, &mut taker) {
            // An answer this request does not take (a typed value that does
            // not fit its form) is not sent; the card waits on for one that
            // fits.
            Outcome::DoesNotFit => self.wait_again(request_id),
            outcome => {
                self.pending.remove(request_id);
                match outcome {
                    Outcome::NotHanded(e) => Err(e),
                    Outcome::NotRecorded(e) => {
                        dir.log(&format!("codex: {e}"));
                        Ok(())
                    }
                    _ => Ok(()),
                }
            }
        }
    }
}

/// Codex's part of the road: the protocol's answer to one pending server
/// request, sent on the client's connection.
struct Answering<'c, 'a> {
    id: Value,
    method: String,
    params: Value,
    seq: u64,
    client: &'c mut Client<'a>,
}

impl Taker for Answering<'_, '_> {
    fn translate(&self, answer: &AnswerBody, _: &Takeable) -> Option<Value> {
        codex_app::response(&self.method, &self.params, answer)
    }

    /// Codex writes its rules into its home, whatever the project.
    fn project(&self) -> Option<PathBuf> {
        Some(PathBuf::from("."))
    }

    fn hand_over(&mut self, result: Value) -> Result<bool, String> {
        self.client
            .send(&json!({"id": self.id, "result": result}))
            .map(|()| true)
    }

    fn closing(&self) -> Closing {
        Closing::Here {
            cli: Cli::Codex,
            opened: Some(self.seq),
        }
    }
}

/// A waiter's end that the main loop writes to when its request resolved.
struct Resolved(OwnedFd);

impl DialogEnd for Resolved {
    fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    fn over(&mut self) -> bool {
        true
    }
}

/// A pipe: its reading end, then its writing end.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both were just opened and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Makes a pipe's reading end readable.
fn poke(fd: RawFd) {
    // SAFETY: writes one byte from a live buffer.
    let _ = unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) };
}

fn drain(fd: RawFd) {
    let mut buf = [0u8; 64];
    // SAFETY: reads into a buffer of the length given.
    while unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
}
