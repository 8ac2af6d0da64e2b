//! `ls --watch`: the list drawn again whenever it changes, kept up to date
//! by the live list's socket as the page is (docs/api.md, "The live list"):
//! a ticket from this login opens it, the whole list comes first, then what
//! changed. A change that does not start from the revision drawn costs one
//! read of the list; without a socket the list is read instead, less often
//! the longer that lasts. Ctrl-C ends it.

use std::io::Write;
use std::time::Duration;

use needs_you_core::api::NeedsYou;
use needs_you_core::live::{self, ToPage};
use needs_you_reporter::client::{Client, FailureKind};
use needs_you_reporter::socket::{self, Heard, Opened, Socket};
use serde::Deserialize;
use serde_json::json;

use super::{cards, now_ms};
use crate::display;
use crate::fail::{exit, Fail, Result};
use crate::login::Login;
use crate::term;

/// A read waits at most this long: then the ages on screen move on.
const TICK: Duration = Duration::from_secs(15);
/// The first and the longest wait before trying again without a socket.
const FIRST_RETRY: Duration = Duration::from_millis(1500);
const LAST_RETRY: Duration = Duration::from_secs(30);

/// The list drawn, its revision, and the cards built here for it
/// ([`cards`]).
struct Drawn {
    revision: Option<i64>,
    list: NeedsYou,
    cards: cards::Built,
}

enum Went {
    /// Stdout closed: nobody is watching.
    Nobody,
    /// The socket dropped, after it was up.
    Dropped,
}

pub fn watch_list(login: &Login, client: &Client) -> Result<i32> {
    let mut drawn = Drawn {
        revision: None,
        list: NeedsYou {
            questions: vec![],
            more: 0,
            tasks: vec![],
        },
        cards: cards::Built::new(login),
    };
    let mut retry = FIRST_RETRY;
    loop {
        match open(client)? {
            Some(mut ws) => {
                retry = FIRST_RETRY;
                match follow(&mut ws, client, &mut drawn)? {
                    Went::Nobody => return Ok(exit::OK),
                    Went::Dropped => continue,
                }
            }
            None => {
                if !read(client, &mut drawn)? {
                    return Ok(exit::OK);
                }
                std::thread::sleep(retry);
                retry = (retry * 2).min(LAST_RETRY);
            }
        }
    }
}

#[derive(Deserialize)]
struct Ticket {
    ticket: String,
}

/// The live list's socket, or `None` when none can be had now (the server
/// out of reach, or one without a live list). A refused login ends the watch.
fn open(client: &Client) -> Result<Option<Box<Socket>>> {
    let ticket = match client.post::<Ticket>("/v1/live", &json!({})) {
        Ok(t) => t.ticket,
        Err(f) if f.kind == FailureKind::Refused => return Err(f.into()),
        Err(_) => return Ok(None),
    };
    let path = format!(
        "/v1/live?{}",
        needs_you_core::query::encode(&[("ticket", &ticket)])
    );
    Ok(match socket::open(client.base(), &path, &[], TICK) {
        Opened::Up(ws) => Some(ws),
        Opened::Refused | Opened::Down(_) => None,
    })
}

/// Draws the list as the socket tells it, until the socket goes.
fn follow(ws: &mut Socket, client: &Client, drawn: &mut Drawn) -> Result<Went> {
    loop {
        let text = match socket::hear(ws) {
            Heard::Text(t) => t,
            Heard::Nothing => {
                if !draw(client, drawn) {
                    return Ok(Went::Nobody);
                }
                continue;
            }
            Heard::Gone => return Ok(Went::Dropped),
        };
        let Ok(msg) = serde_json::from_str::<ToPage>(&text) else {
            continue;
        };
        match msg {
            ToPage::List { revision, list } => {
                drawn.revision = Some(revision);
                drawn.list = list;
            }
            ToPage::Changes {
                revision,
                from,
                changes,
            } => {
                if drawn.revision == Some(from) {
                    changes.apply(&mut drawn.list);
                    drawn.revision = Some(revision);
                } else if drawn.revision.is_none_or(|r| revision > r) {
                    // A change was missed: one read catches up.
                    if !read(client, drawn)? {
                        return Ok(Went::Nobody);
                    }
                    continue;
                } else {
                    continue; // older than what is drawn
                }
            }
            ToPage::SignedOut => {
                return Err(Fail::new(
                    exit::LOGIN,
                    "this login was signed out (revoked or replaced): `needs-you login URL` with a new pairing code replaces it",
                ))
            }
        }
        if !draw(client, drawn) {
            return Ok(Went::Nobody);
        }
    }
}

/// One read of the list, drawn; false when nobody is watching.
fn read(client: &Client, drawn: &mut Drawn) -> Result<bool> {
    let reply = client.request("GET", "/v1/needs-you", None, None)?;
    drawn.revision = reply.etag.as_deref().and_then(live::etag_revision);
    drawn.list = client.read::<NeedsYou>(reply.body)?;
    Ok(draw(client, drawn))
}

/// Home, clear, then the list: one write, so it does not flicker. False
/// when stdout is closed.
fn draw(client: &Client, drawn: &mut Drawn) -> bool {
    let questions = drawn.cards.shown(client, &drawn.list.questions);
    let mut out = std::io::stdout().lock();
    let screen = format!(
        "\x1b[H\x1b[2J{}",
        display::questions(&questions, now_ms(), term::width())
    );
    out.write_all(screen.as_bytes())
        .and_then(|_| out.flush())
        .is_ok()
}
