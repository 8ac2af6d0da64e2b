//! One Durable Object per owner, holding the sockets of the pages (and
//! `needs-you ls --watch`) that show that owner's list, so that a change
//! reaches them at once and an idle page reads nothing.
//!
//! A reader first asks for a ticket with its credential (`POST /v1/live`):
//! the object keeps the ticket's hash for [`TICKET_FOR_MS`], and the socket
//! (`GET /v1/live?ticket=…`) spends it. The credential never travels in a
//! URL, and a socket has the rights of the credential that asked: reading
//! the list, and Show terminal only with that right. The sockets are
//! accepted with the Hibernation API, so an open page costs nothing while
//! nothing changes.
//!
//! Every change to what the list shows ends with [`changed`]: the object
//! reads the list once (only while a socket is open) and sends each socket
//! what changed since the list it sent last (`needs_you_core::live`). After a
//! hibernation it remembers no list, and sends the whole of it. A page's
//! presence rides on its socket; a revoked device's sockets are closed.

use std::cell::RefCell;

use needs_you_core::api::{NeedsYou, Right};
use needs_you_core::live::{self, FromPage, ToPage, CLOSE_SIGNED_OUT, LOOKING_FOR_S};
use needs_you_core::query;
use needs_you_core::relay_messages::CLOSE_FLOOD;
use serde::{Deserialize, Serialize};
use worker::{
    durable_object, DurableObject, Env, Method, Request, RequestInit, Response, Result, State,
    WebSocket, WebSocketIncomingMessage, WebSocketPair,
};

use crate::auth::Person;
use crate::ids::{at, new_token, now_ms, sha256_hex};
use crate::limits::{self, Rate};
use crate::{listing, store};

/// How long a ticket may wait to be spent: a page opens its socket at once.
const TICKET_FOR_MS: f64 = 30_000.0;

/// How many tickets of one credential may wait to be spent at once: a page
/// asks for one per socket and spends it at once. Counted per credential,
/// never per owner, so that one device (whatever its rights) cannot use up
/// what another's page needs; the owner's object holds at most this many
/// per live device and owner token.
const TICKETS_PER_CREDENTIAL: usize = 4;

/// The tags a socket is accepted with: whether it sees Show terminal, and
/// whose credential opened it ([`Reader::tag`]).
const PLAIN: &str = "plain";
const SCREEN: &str = "screen";
const VARIANTS: [&str; 2] = [PLAIN, SCREEN];

/// The storage key that says a credential was signed out, for good: a
/// socket whose ticket was asked for before is refused.
fn gone_key(tag: &str) -> String {
    format!("gone:{tag}")
}

/// Whose credential a socket has: a device, or one owner token (by its
/// hash: a replaced token's sockets go, the new one's stay).
pub enum Reader<'a> {
    Device(&'a str),
    OwnerToken(&'a str),
}

impl Reader<'_> {
    fn tag(&self) -> String {
        match self {
            Reader::Device(id) => format!("d:{id}"),
            Reader::OwnerToken(hash) => format!("o:{hash}"),
        }
    }
}

/// A ticket kept until it is spent, and then a socket's own: who it is.
#[derive(Serialize, Deserialize)]
struct Holder {
    owner_id: String,
    /// The device, for its presence; `None` for the owner's token.
    device_id: Option<String>,
    /// [`Reader::tag`].
    who: String,
    screen: bool,
    /// A ticket's only: when it stops being good.
    #[serde(default)]
    until: f64,
}

#[durable_object]
pub struct Live {
    state: State,
    env: Env,
    /// The last list sent to the sockets without and with Show terminal,
    /// and its revision; forgotten in a hibernation.
    last: RefCell<[Option<(i64, NeedsYou)>; 2]>,
}

impl DurableObject for Live {
    fn new(state: State, env: Env) -> Self {
        Live {
            state,
            env,
            last: RefCell::new([None, None]),
        }
    }

    async fn fetch(&self, req: Request) -> Result<Response> {
        let url = req.inner().url();
        match req.path().as_str() {
            "/ticket" => {
                let holder = req.headers().get("x-holder")?.unwrap_or_default();
                let Holder { owner_id, who, .. } = serde_json::from_str(&holder)?;
                if self.waiting_tickets(|_| false, &who).await? >= TICKETS_PER_CREDENTIAL {
                    return Response::error("too many tickets", 429);
                }
                let ticket = new_token("lt_");
                let storage = self.state.storage();
                storage.put(&ticket_key(&ticket), &holder).await?;
                storage.put("owner", &owner_id).await?;
                Response::ok(ticket)
            }
            "/connect" => {
                let ticket = query::param(&url, "ticket").unwrap_or_default();
                let storage = self.state.storage();
                let key = ticket_key(&ticket);
                let Some(holder) = storage.get::<String>(&key).await.ok().flatten() else {
                    return Response::error("unknown ticket", 401);
                };
                storage.delete(&key).await?;
                let holder: Holder = serde_json::from_str(&holder)?;
                if holder.until < now_ms() {
                    return Response::error("that ticket has run out", 401);
                }
                let pair = WebSocketPair::new()?;
                if !self
                    .read_and_send(&holder.owner_id, Some((&pair.server, &holder)))
                    .await?
                {
                    return Response::error("signed out", 401);
                }
                Response::from_websocket(pair.client)
            }
            "/changed" => {
                let owner_id = req.headers().get("x-owner-id")?.unwrap_or_default();
                self.read_and_send(&owner_id, None).await?;
                Response::empty()
            }
            "/close" => {
                let tag = req.headers().get("x-tag")?.unwrap_or_default();
                // A ticket asked for before the credential went is no good
                // either.
                self.state.storage().put(&gone_key(&tag), &true).await?;
                self.waiting_tickets(|h| h.who == tag, &tag).await?;
                let said = ToPage::SignedOut.to_frame();
                for ws in self.state.get_websockets_with_tag(&tag) {
                    let _ = ws.send_with_str(&said);
                    let _ = ws.close(Some(CLOSE_SIGNED_OUT), Some("signed out"));
                }
                Response::empty()
            }
            _ => Response::error("not found", 404),
        }
    }

    /// A task's expiry or a mute's end changes the list with no write.
    async fn alarm(&self) -> Result<Response> {
        if let Some(owner_id) = self
            .state
            .storage()
            .get::<String>("owner")
            .await
            .ok()
            .flatten()
        {
            self.read_and_send(&owner_id, None).await?;
        }
        Response::empty()
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let Some(holder) = ws.deserialize_attachment::<Holder>()? else {
            return Ok(());
        };
        // Every message counts, whatever it says: a flood closes the socket
        // before anything is written for it (each presence writes a row).
        if limits::within_rate(&self.env, Rate::Live, &holder.who)
            .await
            .is_err()
        {
            let _ = ws.close(Some(CLOSE_FLOOD), Some("more than a page says"));
            return Ok(());
        }
        let WebSocketIncomingMessage::String(text) = message else {
            return Ok(());
        };
        if text.len() >= 256 {
            return Ok(());
        }
        if let (Ok(FromPage::Looking { looking }), Some(device_id)) =
            (serde_json::from_str(&text), &holder.device_id)
        {
            let until = looking.then(|| now_ms() + f64::from(LOOKING_FOR_S) * 1000.0);
            store::set_looking(&self.env, device_id, until).await?;
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
        // A page that went is not looking, unless another socket of its
        // device is still open (it says so again soon).
        if let Some(Holder {
            device_id: Some(device_id),
            ..
        }) = ws.deserialize_attachment::<Holder>()?
        {
            let others = self
                .state
                .get_websockets_with_tag(&Reader::Device(&device_id).tag());
            if others.len() <= 1 {
                store::set_looking(&self.env, &device_id, None).await?;
            }
        }
        Ok(())
    }

    async fn websocket_error(&self, _ws: WebSocket, _error: worker::Error) -> Result<()> {
        Ok(())
    }
}

impl Live {
    /// How many tickets of the credential `who` ([`Reader::tag`]) wait to
    /// be spent, after forgetting every ticket that ran out (a credential
    /// that asks for tickets and never spends them fills nothing) and those
    /// `revoked` says are no longer good.
    async fn waiting_tickets(&self, revoked: impl Fn(&Holder) -> bool, who: &str) -> Result<usize> {
        let storage = self.state.storage();
        let tickets = storage
            .list_with_options(worker::ListOptions::new().prefix("t:"))
            .await?;
        let now = now_ms();
        let mut spent = Vec::new();
        let mut waiting = 0;
        tickets.for_each(&mut |value, key| {
            let holder = value
                .as_string()
                .and_then(|v| serde_json::from_str::<Holder>(&v).ok());
            let good = holder
                .as_ref()
                .is_some_and(|h| h.until >= now && !revoked(h));
            match key.as_string() {
                Some(key) if !good => spent.push(key),
                _ if holder.is_some_and(|h| h.who == who) => waiting += 1,
                _ => {}
            }
        });
        if !spent.is_empty() {
            storage.delete_multiple(spent).await?;
        }
        Ok(waiting)
    }

    /// Reads the owner's list and sends every socket what changed since the
    /// list it sent that socket's kind last (the whole list after a
    /// hibernation, which forgets it); then accepts `newcomer`, if any, and
    /// sends it the whole list. With no socket open nothing is read. False:
    /// the newcomer's credential was signed out meanwhile, and it was not
    /// accepted.
    async fn read_and_send(
        &self,
        owner_id: &str,
        newcomer: Option<(&WebSocket, &Holder)>,
    ) -> Result<bool> {
        if newcomer.is_none() && self.state.get_websockets().is_empty() {
            *self.last.borrow_mut() = [None, None];
            return Ok(true);
        }
        let now = now_ms();
        let page = store::list_page(&self.env, owner_id, now).await?;
        for (i, variant) in VARIANTS.into_iter().enumerate() {
            let sockets = self.state.get_websockets_with_tag(variant);
            let list = listing::needs_you(&page, variant == SCREEN);
            let mut last = self.last.borrow_mut();
            if sockets.is_empty() {
                last[i] = None;
                continue;
            }
            let frame = match last[i].take() {
                // Two changes read at once may come back in either order: a
                // list older than the one sent last is not sent.
                Some((sent, old)) if page.revision < sent => {
                    last[i] = Some((sent, old));
                    continue;
                }
                // Told twice of one change: nothing to say.
                Some((sent, old)) if page.revision == sent && old == list => {
                    last[i] = Some((sent, old));
                    continue;
                }
                Some((sent, old)) => ToPage::Changes {
                    revision: page.revision,
                    from: sent,
                    changes: live::changes(&old, &list),
                },
                None => ToPage::List {
                    revision: page.revision,
                    list: list.clone(),
                },
            }
            .to_frame();
            last[i] = Some((page.revision, list));
            for ws in sockets {
                let _ = ws.send_with_str(&frame);
            }
        }
        if let Some((ws, holder)) = newcomer {
            // Signed out while the list was read: no socket. The check and
            // the accept have no wait on the network between them, so a
            // sign-out either comes first or finds this socket to close.
            let storage = self.state.storage();
            if storage
                .get::<bool>(&gone_key(&holder.who))
                .await?
                .unwrap_or(false)
            {
                return Ok(false);
            }
            let i = usize::from(holder.screen);
            self.state
                .accept_websocket_with_tags(ws, &[VARIANTS[i], &holder.who]);
            ws.serialize_attachment(holder)?;
            let list = listing::needs_you(&page, holder.screen);
            let _ = ws.send_with_str(
                ToPage::List {
                    revision: page.revision,
                    list: list.clone(),
                }
                .to_frame(),
            );
            let mut last = self.last.borrow_mut();
            if last[i].is_none() {
                last[i] = Some((page.revision, list));
            }
        }
        self.wake_at_next_expiry(&page, now).await?;
        Ok(true)
    }

    /// Sets the alarm for the soonest moment the list changes by itself: a
    /// task's expiry or the end of its mute.
    async fn wake_at_next_expiry(&self, page: &store::ListPage, now: f64) -> Result<()> {
        let next = page
            .tasks
            .iter()
            .flat_map(|t| [t.expires_at, t.muted_until])
            .flatten()
            .map(|at| at as f64)
            .filter(|at| *at > now)
            .fold(f64::INFINITY, f64::min);
        if next.is_finite() {
            self.state.storage().set_alarm(at(next + 1.0)).await?;
        }
        Ok(())
    }
}

fn ticket_key(ticket: &str) -> String {
    format!("t:{}", sha256_hex(ticket.as_bytes()))
}

// ---- the Worker's side ---------------------------------------------------------

async fn call(env: &Env, owner_id: &str, path: &str, headers: &[(&str, &str)]) -> Result<Response> {
    let stub = env
        .durable_object("LIVE")?
        .id_from_name(owner_id)?
        .get_stub()?;
    let h = worker::Headers::new();
    for (k, v) in headers {
        h.set(k, v)?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Post).with_headers(h);
    stub.fetch_with_request(Request::new_with_init(
        &format!("https://live{path}"),
        &init,
    )?)
    .await
}

/// A ticket for one socket with `person`'s rights over the list, good for
/// [`TICKET_FOR_MS`]. It names the owner's object (its id, not the owner's)
/// before a dot; the secret after it is kept only as a hash. `None`: too
/// many of this credential's tickets wait to be spent.
pub async fn ticket(env: &Env, person: &Person) -> Result<Option<String>> {
    let holder = Holder {
        owner_id: person.owner_id.clone(),
        device_id: person.device_id.clone(),
        who: match &person.device_id {
            Some(id) => Reader::Device(id),
            None => Reader::OwnerToken(&person.credential_hash),
        }
        .tag(),
        screen: person.rights.has(Right::Screen),
        until: now_ms() + TICKET_FOR_MS,
    };
    let holder = serde_json::to_string(&holder)?;
    let mut resp = call(env, &person.owner_id, "/ticket", &[("x-holder", &holder)]).await?;
    if resp.status_code() != 200 {
        return Ok(None);
    }
    let secret = resp.text().await?;
    let namespace = env.durable_object("LIVE")?;
    let object = namespace.id_from_name(&person.owner_id)?.to_string();
    Ok(Some(format!("{object}.{secret}")))
}

/// Hands a socket's upgrade to the object its ticket names. `None`: the
/// ticket names no object of ours.
pub async fn connect(env: &Env, ticket: &str) -> Result<Option<Response>> {
    let Some((object, secret)) = ticket.split_once('.') else {
        return Ok(None);
    };
    let namespace = env.durable_object("LIVE")?;
    let Ok(id) = namespace.id_from_string(object) else {
        return Ok(None);
    };
    let headers = worker::Headers::new();
    headers.set("upgrade", "websocket")?;
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let path = format!(
        "https://live/connect?{}",
        query::encode(&[("ticket", secret)])
    );
    Ok(Some(
        id.get_stub()?
            .fetch_with_request(Request::new_with_init(&path, &init)?)
            .await?,
    ))
}

/// What the owner's list shows changed: their open pages hear of it now. A
/// failure is logged: the pages catch up at their next change or socket.
pub async fn changed(env: &Env, owner_id: &str) {
    if let Err(e) = call(env, owner_id, "/changed", &[("x-owner-id", owner_id)]).await {
        worker::console_error!("could not tell the live list of a change: {e}");
    }
}

/// The owner of task `task_id` saw a change (a relay moved an answer on).
pub async fn changed_of_task(env: &Env, task_id: &str) {
    match store::owner_of_task(env, task_id).await {
        Ok(Some(owner_id)) => changed(env, &owner_id).await,
        Ok(None) => {}
        Err(e) => worker::console_error!("could not find the owner of a task: {e}"),
    }
}

/// A device was revoked, or an owner token replaced: its sockets are closed
/// at once, and its tickets go.
pub async fn signed_out(env: &Env, owner_id: &str, reader: Reader<'_>) {
    if let Err(e) = call(env, owner_id, "/close", &[("x-tag", &reader.tag())]).await {
        worker::console_error!("could not close a signed-out reader's socket: {e}");
    }
}
