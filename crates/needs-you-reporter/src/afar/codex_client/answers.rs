//! An approval's question opened here and on the Worker, a waiter of its
//! own on the task's relay, and what it is handed taken down the one road
//! (`handover`) as the protocol's answer; a reply's answer down the same
//! road, sent to its thread as the person's next message.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

use needs_you_core::afar::AnswerBody;
use needs_you_core::classify::{codex_app, Takeable};
use needs_you_core::{Cli, Kind, Report};
use serde_json::{json, Value};

use super::connection::{
    pipe, poke, Awaited, Call, Client, Handed, OpenReply, RequestId, Resolved,
};
use crate::afar::handover::{self, Outcome};
use crate::afar::relay;
use crate::afar::taker::{Closing, Taker};
use crate::afar::waiters;
use crate::error::Error;
use crate::questions;
use crate::state::Opening;
use crate::terminal;

impl Client<'_> {
    /// Opens the question of `asked` for `session`, in the terminal the TUI
    /// runs in; what it takes from afar, unless it is too large to carry.
    pub(super) fn open(
        &self,
        session: &str,
        cwd: Option<&str>,
        asked: codex_app::Asked,
    ) -> Result<Option<(u64, Takeable)>, Error> {
        let takeable = asked.takeable();
        let text = asked.text();
        let here = terminal::here(cwd, self.dir.path());
        let lasting = takeable
            .as_ref()
            .map(|t| crate::state::lasting_ids(&t.request))
            .unwrap_or_default();
        let opening = Opening {
            kind: asked.kind,
            transcript: None,
            agent: None,
            digest: takeable.as_ref().map(|t| t.takes.digest.as_str()),
            lasting: &lasting,
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
                // The sender reads them from the request, off this path.
                lasting: Vec::new(),
                sealed: None,
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
    pub(super) fn wait_for_answer(
        &self,
        session: &str,
        request_id: RequestId,
        takeable: Takeable,
        resolved: OwnedFd,
    ) {
        let socket = waiters::socket_path(self.dir.path(), &relay::task_key(&self.target));
        let session = session.to_owned();
        let (tx, wake) = (self.handed_tx.clone(), std::sync::Arc::clone(&self.wake_tx));
        std::thread::spawn(move || {
            let mut ended = Resolved(resolved);
            if let Some(answered) = waiters::wait(&socket, &session, &takeable, Some(&mut ended)) {
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
    pub(super) fn wait_again(&mut self, request_id: &RequestId) -> Result<(), Error> {
        let (rx, tx) = pipe().map_err(|e| Error::Protocol(e.to_string()))?;
        let Some(p) = self.pending.get_mut(request_id) else {
            return Ok(());
        };
        p.resolved = tx;
        let (session, takeable) = (p.session.clone(), p.takeable.clone());
        self.wait_for_answer(&session, request_id.clone(), takeable, rx);
        Ok(())
    }

    pub(super) fn on_handed(&mut self, h: Handed) -> Result<(), Error> {
        match h.to {
            Awaited::Request(id) => self.answer_request(&id, h.answered),
            Awaited::Message(reply) => self.send_message(reply, h.answered),
        }
    }

    /// Waits, on a thread of its own, for the person's message to the reply
    /// open here in `thread` (one of the person's), if one is.
    pub(super) fn wait_for_message(&mut self, thread: &str) {
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
        let socket = waiters::socket_path(self.dir.path(), &relay::task_key(&self.target));
        let reply = OpenReply {
            thread: thread.to_owned(),
            seq,
        };
        let (tx, wake) = (self.handed_tx.clone(), std::sync::Arc::clone(&self.wake_tx));
        std::thread::spawn(move || {
            let mut ended = Resolved(ended_rx);
            if let Some(answered) =
                waiters::wait_for_message(&socket, &reply.thread, Some(&mut ended))
            {
                let to = Awaited::Message(reply);
                if tx.send(Handed { to, answered }).is_ok() {
                    poke(wake.as_raw_fd());
                }
            }
        });
    }

    /// Lets go of the message waiter of `thread`, if there is one.
    pub(super) fn stop_waiting_for_message(&mut self, thread: &str) {
        if let Some(end) = self.messages.remove(thread) {
            poke(end.as_raw_fd());
        }
    }

    /// The person's message, sent as the thread's next turn (a message to
    /// the model, never a command: the protocol runs no `/` or `!`) while
    /// the thread still waits for it, then taken, and the reply closes as
    /// answered; else let go (the relay reports that the agent did not take
    /// it).
    pub(super) fn send_message(
        &mut self,
        reply: OpenReply,
        answered: waiters::Answered,
    ) -> Result<(), Error> {
        if self.messages.remove(&reply.thread).is_none() {
            return Ok(()); // a turn started there first
        }
        let (dir, task) = (self.dir, crate::afar::relay::task_key(&self.target));
        let thread = reply.thread.clone();
        let mut taker = Messaging {
            thread: reply.thread,
            seq: reply.seq,
            client: self,
        };
        match handover::deliver(dir, &task, &thread, None, answered, &mut taker) {
            Outcome::NotHanded(e) => Err(e),
            _ => Ok(()),
        }
    }

    /// An answer handed over: sent as the protocol's answer while its
    /// request is still pending, and then taken; else let go (the relay
    /// reports that the agent did not take it).
    pub(super) fn answer_request(
        &mut self,
        request_id: &RequestId,
        answered: waiters::Answered,
    ) -> Result<(), Error> {
        let Some(p) = self.pending.get(request_id) else {
            return Ok(()); // resolved first: the terminal won
        };
        let (dir, task) = (self.dir, crate::afar::relay::task_key(&self.target));
        let (session, takeable) = (p.session.clone(), p.takeable.clone());
        let mut taker = Answering {
            id: request_id.to_json(),
            method: p.method.clone(),
            params: p.params.clone(),
            seq: p.seq,
            client: self,
        };
        match handover::deliver(dir, &task, &session, Some(&takeable), answered, &mut taker) {
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
    fn translate(&self, answer: &AnswerBody, _: Option<&Takeable>) -> Option<Value> {
        codex_app::response(&self.method, &self.params, answer)
    }

    /// Codex writes its rules into its home, whatever the project.
    fn project(&self) -> Option<PathBuf> {
        Some(PathBuf::from("."))
    }

    fn hand_over(&mut self, result: Value) -> Result<bool, Error> {
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

/// Codex's part of the road for a reply's answer: the person's message, sent
/// as the thread's next turn (a message to the model, never a command: the
/// protocol runs no `/` or `!`), the reply closed first.
struct Messaging<'c, 'a> {
    thread: String,
    seq: u64,
    client: &'c mut Client<'a>,
}

impl Taker for Messaging<'_, '_> {
    fn translate(&self, answer: &AnswerBody, _: Option<&Takeable>) -> Option<Value> {
        let AnswerBody::Text { text } = answer else {
            return None;
        };
        let line = needs_you_core::answer::check(text).ok()?;
        Some(json!([{"type": "text", "text": line, "text_elements": []}]))
    }

    /// A message writes no rule.
    fn project(&self) -> Option<PathBuf> {
        None
    }

    fn hand_over(&mut self, input: Value) -> Result<bool, Error> {
        self.client.call(
            "turn/start",
            json!({"threadId": self.thread, "input": input}),
            Call::Nothing,
        )?;
        Ok(true)
    }

    fn closing(&self) -> Closing {
        Closing::First {
            cli: Cli::Codex,
            opened: self.seq,
        }
    }
}
