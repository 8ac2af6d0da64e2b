//! One Durable Object per task, holding the WebSocket of that task's relay:
//! `report-prompt __relay` on the agent's machine, which types answers into
//! the agent's tmux pane.
//!
//! The Worker checks the task credential and hands the upgrade here
//! (`/connect`); the socket is accepted with the Hibernation API, so an idle
//! relay costs nothing while it waits. Everything else the Worker asks is a
//! [`Command`]. A posted answer is pushed at once (`deliver`); a relay that
//! (re)connects says `hello` and is sent every answer still on its way, so
//! one queued while it was away arrives once it is back. Revoking the task
//! closes its sockets (`close`).
//!
//! Show terminal asks the relay for a pane's screen (`screen`): the object
//! sends the ask, waits for the relay's answer to it by its request id, and
//! hands it back to the one request that asked. A screen is held in memory
//! only while it passes; nothing of it is stored or logged.
//!
//! The messages are `needs_you_core::relay_messages`'s, the relay's own types. Every
//! state change is checked against the socket's own task in D1, so a relay
//! can only ever touch its own task's answers.

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::Duration;

use futures_channel::oneshot;
use futures_util::future::{select, Either};
use needs_you_core::relay_messages::{
    Answer, FromRelay, Revocation, ScreenAsk, ScreenReply, ToRelay, CAN_HEADER, CAN_SCREEN,
    CLOSE_FLOOD, CLOSE_REPLACED, CLOSE_REVOKED, MAX_REASON_CHARS,
};
use serde::{Deserialize, Serialize};
use worker::{
    durable_object, DurableObject, Env, Method, Request, RequestInit, Response, Result, State,
    WebSocket, WebSocketIncomingMessage, WebSocketPair,
};

use crate::ids::now_ms;
use crate::limits::{self, Rate};
use crate::{live, store};
use needs_you_core::api::AnswerState;

#[durable_object]
pub struct Relay {
    state: State,
    env: Env,
    /// The screens asked for and not answered yet, by request id.
    screens: RefCell<HashMap<String, oneshot::Sender<ScreenReply>>>,
}

/// How long a screen may take: a relay answers in milliseconds; one that
/// does not within this is taken to be gone.
const SCREEN_WITHIN: Duration = Duration::from_secs(5);

/// What became of a screen asked of the task's relay.
pub enum Asked {
    Reply(ScreenReply),
    /// No relay of the task is connected.
    NoRelay,
    /// Its relay is an older reporter's, which shows no screens.
    Outdated,
    /// Its relay did not answer in time.
    Late,
}

/// What the Worker asks of a task's object, besides the relay's own upgrade
/// ([`CONNECT_PATH`]).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Command {
    /// An answer was queued: push it to the relay if one is connected.
    Deliver { task_id: String, answer_id: String },
    /// Show terminal: the screen of `session`'s pane; `seen`, the digest of
    /// the screen the reader has.
    Screen {
        session: String,
        seen: Option<String>,
    },
    /// A rule was asked to be taken back.
    Revoke(Revocation),
    /// The task was revoked: its relay is cut off.
    Close,
}

/// The path of the relay's upgrade, and its headers: the task's id, checked
/// by the Worker, and what the relay can do ([`CAN_HEADER`]).
const CONNECT_PATH: &str = "/connect";
const TASK_HEADER: &str = "x-task-id";

fn send(ws: &WebSocket, answer: Answer) {
    // A socket that just went away is the relay's to reconnect; the answer
    // stays on its way in D1 and is sent again on its `hello`.
    let _ = ws.send_with_str(ToRelay::Answer(answer).to_frame());
}

impl Relay {
    /// The relay's upgrade, handed on by the Worker once it checked the task
    /// credential: the task's id and what the relay can do come as headers.
    fn accept_relay(&self, req: &Request) -> Result<Response> {
        let task_id = req.headers().get(TASK_HEADER)?.unwrap_or_default();
        // One relay per task: the newest. Whatever held the task's socket
        // before is told to stop.
        for old in self.state.get_websockets() {
            let _ = old.close(
                Some(CLOSE_REPLACED),
                Some("a newer relay of this task connected"),
            );
        }
        let pair = WebSocketPair::new()?;
        // Tagged with what it can do, which outlives hibernation.
        let can = req.headers().get(CAN_HEADER)?.unwrap_or_default();
        if can.split(',').any(|c| c.trim() == CAN_SCREEN) {
            self.state
                .accept_websocket_with_tags(&pair.server, &[CAN_SCREEN]);
        } else {
            self.state.accept_web_socket(&pair.server);
        }
        pair.server.serialize_attachment(&task_id)?;
        Response::from_websocket(pair.client)
    }

    /// Asks the relay for a pane's screen and waits for its answer to this
    /// very ask.
    async fn ask_screen(&self, session: String, seen: Option<String>) -> Result<Response> {
        let sockets = self.state.get_websockets_with_tag(CAN_SCREEN);
        if sockets.is_empty() {
            // A relay that cannot show screens (an older reporter's) is told
            // apart by its status: 426, "upgrade required".
            return if self.state.get_websockets().is_empty() {
                Response::error("no relay", 409)
            } else {
                Response::error("the relay cannot show screens", 426)
            };
        }
        let request_id = crate::ids::new_id("scr_");
        let (tx, rx) = oneshot::channel();
        self.screens.borrow_mut().insert(request_id.clone(), tx);
        let ask = ToRelay::Screen(ScreenAsk {
            request_id: request_id.clone(),
            session,
            seen,
        })
        .to_frame();
        for ws in sockets {
            let _ = ws.send_with_str(&ask);
        }
        let waited = select(rx, worker::Delay::from(SCREEN_WITHIN)).await;
        self.screens.borrow_mut().remove(&request_id);
        match waited {
            Either::Left((Ok(reply), _)) => Response::from_json(&reply),
            // Its relay went away while it was asked.
            Either::Left((Err(_), _)) => Response::error("no relay", 409),
            Either::Right(_) => Response::error("late", 504),
        }
    }
}

impl DurableObject for Relay {
    fn new(state: State, env: Env) -> Self {
        Relay {
            state,
            env,
            screens: RefCell::new(HashMap::new()),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        // The relay's own upgrade comes as the request it is; everything
        // else the Worker asks is a command.
        if req.path() == CONNECT_PATH {
            return self.accept_relay(&req);
        }
        match req.json::<Command>().await? {
            Command::Deliver { task_id, answer_id } => {
                // With no relay connected the answer stays queued: it can
                // still be taken back or replaced, and goes at the hello.
                let sockets = self.state.get_websockets();
                if sockets.is_empty() {
                    return Response::empty();
                }
                if let Some(answer) =
                    store::claim_answer(&self.env, &task_id, &answer_id, now_ms()).await?
                {
                    for ws in sockets {
                        send(&ws, answer.clone());
                    }
                    live::changed_of_task(&self.env, &task_id).await;
                }
                Response::empty()
            }
            Command::Screen { session, seen } => self.ask_screen(session, seen).await,
            Command::Revoke(revocation) => {
                // With no relay connected the rule stays asked for: it goes
                // at the hello.
                let frame = ToRelay::Revoke(revocation).to_frame();
                for ws in self.state.get_websockets() {
                    let _ = ws.send_with_str(&frame);
                }
                Response::empty()
            }
            Command::Close => {
                for ws in self.state.get_websockets() {
                    let _ = ws.close(Some(CLOSE_REVOKED), Some("the task was revoked"));
                }
                Response::empty()
            }
        }
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let Some(task_id) = ws.deserialize_attachment::<String>()? else {
            return Ok(());
        };
        let WebSocketIncomingMessage::String(text) = message else {
            return Ok(());
        };
        // No message of the protocol is this long (a screen is at most
        // MAX_BYTES): a longer one is not worth parsing.
        if text.len() > 2 * needs_you_core::screen::MAX_BYTES + 4096 {
            return Ok(());
        }
        let msg = serde_json::from_str::<FromRelay>(&text).ok();
        // Every message counts, but the screen a reader asked for and still
        // waits on (the asking is limited per reader): a flood closes the
        // socket before anything is written for it.
        let asked = matches!(&msg, Some(FromRelay::Screen(r)) if self.screens.borrow().contains_key(&r.request_id));
        if !asked
            && limits::within_rate(&self.env, Rate::Relay, &task_id)
                .await
                .is_err()
        {
            let _ = ws.close(
                Some(CLOSE_FLOOD),
                Some("more messages than this task's rate"),
            );
            return Ok(());
        }
        let Some(msg) = msg else {
            return Ok(());
        };
        let now = now_ms();
        // Everything but a screen moves an answer or a rule on, which the
        // owner's list shows.
        let moves = !matches!(msg, FromRelay::Screen(_));
        match msg {
            FromRelay::Hello => {
                for answer in store::answers_on_their_way(&self.env, &task_id, now).await? {
                    send(&ws, answer);
                }
                for revocation in store::revoking_of_task(&self.env, &task_id).await? {
                    let _ = ws.send_with_str(ToRelay::Revoke(revocation).to_frame());
                }
            }
            FromRelay::Received { answer_id } => {
                mark(&self.env, &task_id, &answer_id, AnswerState::Delivered, now).await?
            }
            FromRelay::Typed { answer_id } => {
                mark(&self.env, &task_id, &answer_id, AnswerState::Typed, now).await?
            }
            FromRelay::Taken { answer_id } => {
                mark(&self.env, &task_id, &answer_id, AnswerState::Taken, now).await?
            }
            FromRelay::Screen(reply) => {
                // Only the request that asked gets it; one nobody waits for
                // (late, or never asked) is dropped.
                if let Some(tx) = self.screens.borrow_mut().remove(&reply.request_id) {
                    let _ = tx.send(reply);
                }
            }
            FromRelay::Revoked(r) => {
                let note: String = needs_you_core::text::line(&r.note)
                    .chars()
                    .take(MAX_REASON_CHARS)
                    .collect();
                store::revoked(&self.env, &task_id, &r.rule_id, r.outcome, &note, now).await?
            }
            FromRelay::Failed {
                answer_id,
                reason,
                code,
            } => {
                // Kept and served to every reader of the API: one visible
                // line, never an escape sequence for a terminal that prints it.
                let reason: String = needs_you_core::text::line(&reason)
                    .chars()
                    .take(MAX_REASON_CHARS)
                    .collect();
                let code = code.filter(|c| {
                    c.len() <= 40 && c.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
                });
                store::mark_answer(
                    &self.env,
                    &task_id,
                    &answer_id,
                    AnswerState::Failed,
                    Some((&reason, code.as_deref())),
                    now,
                )
                .await?
            }
        }
        if moves {
            live::changed_of_task(&self.env, &task_id).await;
        }
        Ok(())
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        _code: usize,
        _reason: String,
        _clean: bool,
    ) -> Result<()> {
        let _ = ws.close(Some(1000), Some("closed"));
        // The screens it was asked for will not come: their readers are told
        // now (one relay per task), not after the wait.
        self.screens.borrow_mut().clear();
        Ok(())
    }

    async fn websocket_error(&self, _ws: WebSocket, _error: worker::Error) -> Result<()> {
        Ok(())
    }
}

/// The relay moved an answer on, with no reason to keep.
async fn mark(
    env: &Env,
    task_id: &str,
    answer_id: &str,
    state: AnswerState,
    now: f64,
) -> Result<()> {
    store::mark_answer(env, task_id, answer_id, state, None, now).await
}

// ---- the Worker's side ---------------------------------------------------------

/// The task's object.
fn stub(env: &Env, task_id: &str) -> Result<worker::Stub> {
    env.durable_object("RELAY")?
        .id_from_name(task_id)?
        .get_stub()
}

/// Sends `cmd` to the task's object.
async fn command(env: &Env, task_id: &str, cmd: &Command) -> Result<Response> {
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(serde_json::to_string(cmd)?.into()));
    stub(env, task_id)?
        .fetch_with_request(Request::new_with_init("https://relay/", &init)?)
        .await
}

/// Hands a relay's upgrade request to its task's object; the answer is the
/// `101` with the socket.
/// `can`: what the relay said it can do ([`CAN_HEADER`]), passed on.
pub async fn connect(env: &Env, task_id: &str, can: &str) -> Result<Response> {
    let headers = worker::Headers::new();
    headers.set("upgrade", "websocket")?;
    headers.set(TASK_HEADER, task_id)?;
    headers.set(CAN_HEADER, can)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let url = format!("https://relay{CONNECT_PATH}");
    stub(env, task_id)?
        .fetch_with_request(Request::new_with_init(&url, &init)?)
        .await
}

/// An answer was queued: push it to the task's relay if one is connected
/// (else it goes when one says `hello`). A failure is logged: the answer is
/// in D1 either way.
pub async fn deliver(env: &Env, task_id: &str, answer_id: &str) {
    let cmd = Command::Deliver {
        task_id: task_id.to_owned(),
        answer_id: answer_id.to_owned(),
    };
    if let Err(e) = command(env, task_id, &cmd).await {
        worker::console_error!("could not reach the relay object of {task_id}: {e}");
    }
}

/// Asks the task's relay for the screen of `session`'s pane; `seen`, the
/// digest of the screen the reader has.
pub async fn screen(env: &Env, task_id: &str, session: &str, seen: &str) -> Result<Asked> {
    let cmd = Command::Screen {
        session: session.to_owned(),
        seen: Some(seen.to_owned()).filter(|s| !s.is_empty()),
    };
    let mut resp = command(env, task_id, &cmd).await?;
    Ok(match resp.status_code() {
        200 => Asked::Reply(resp.json().await?),
        426 => Asked::Outdated,
        409 => Asked::NoRelay,
        _ => Asked::Late,
    })
}

/// A rule was asked to be taken back: tell the task's relay if one is
/// connected (else it hears at its hello). A failure is logged: the ask is
/// in D1 either way.
pub async fn revoke(env: &Env, task_id: &str, r: &Revocation) {
    if let Err(e) = command(env, task_id, &Command::Revoke(r.clone())).await {
        worker::console_error!("could not reach the relay object of {task_id}: {e}");
    }
}

/// The task was revoked: its relay is cut off at once.
pub async fn revoked(env: &Env, task_id: &str) {
    if let Err(e) = command(env, task_id, &Command::Close).await {
        worker::console_error!("could not close the relay of {task_id}: {e}");
    }
}
