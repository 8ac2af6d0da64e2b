//! The app-server's messages, read: the threads of the person's TUI
//! followed as they start and resume, the items whose changes an approval
//! names, and each server request that a card can show listed and waited
//! on (`answers`); a request resolved elsewhere lets its waiter go.

use std::os::fd::AsRawFd;

use needs_you_core::classify::codex_app;
use needs_you_core::Cli;
use serde_json::{json, Value};

use super::connection::{pipe, poke, str_field, Call, Client, Pending, RequestId, Thread};
use crate::error::Error;

impl Client<'_> {
    pub(super) fn on_message(&mut self, msg: &Value) -> Result<(), Error> {
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

    pub(super) fn on_result(&mut self, id: &Value, msg: &Value) -> Result<(), Error> {
        match RequestId::of(id).and_then(|id| self.calls.remove(&id)) {
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

    pub(super) fn resume(&mut self, thread: &str) -> Result<(), Error> {
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

    pub(super) fn learn_thread(&mut self, t: &Value) {
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
    pub(super) fn learn_item(&mut self, item: &Value) {
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

    pub(super) fn on_notification(&mut self, method: &str, params: &Value) -> Result<(), Error> {
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
                    .and_then(RequestId::of)
                    .and_then(|id| self.pending.remove(&id))
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
    pub(super) fn is_the_person_s(&self, thread: &str) -> bool {
        !self.threads.get(thread).is_some_and(|t| t.not_the_person_s)
    }

    pub(super) fn on_request(
        &mut self,
        method: &str,
        id: &Value,
        params: &Value,
    ) -> Result<(), Error> {
        let name = format!("app_{}", method.replace('/', "_"));
        crate::hook::record::named(
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
        let Some(request_id) = RequestId::of(id) else {
            return Ok(()); // no id a JSON-RPC answer could name
        };
        if self.pending.contains_key(&request_id) {
            return Ok(()); // sent again, as to a client that subscribed late
        }
        let cwd = self.threads.get(&thread).and_then(|t| t.cwd.clone());
        match self.open(&thread, cwd.as_deref(), asked) {
            Ok(Some((seq, takeable))) => {
                let (resolved_rx, resolved_tx) =
                    pipe().map_err(|e| Error::Protocol(e.to_string()))?;
                self.wait_for_answer(&thread, request_id.clone(), takeable.clone(), resolved_rx);
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
}
