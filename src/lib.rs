//! The needs-you Worker.
//!
//! Agents' reporters `POST /v1/reports`; owners read `GET /v1/needs-you`. D1 holds
//! owners, tasks, questions, channels and delivery attempts; one Durable Object per
//! question ([`notifier::Notifier`]) holds the alarm that notifies the owner's phone
//! when a dialog is still open `NOTIFY_DELAY_MS` after it was reported.
//!
//! * [`routes`]: the HTTP API, one module per resource, dispatched on the
//!   path and then the method; `routes::page` serves the page's files.
//! * [`json`]: JSON responses, the error type every route returns, and
//!   reading a body within its limit.
//! * [`auth`]: credentials: who is calling.
//! * [`question`]: the question as the Worker reads it from D1.
//! * [`listing`]: the owner's list as `GET /v1/needs-you` and the live list send it.
//! * [`store`]: every D1 statement; a question's life in `store::questions`.
//! * [`delivery`]: the delivery rules, pure: who still needs which event, when.
//! * [`notifier`]: the Durable Object per question, its alarm and its commands.
//! * [`alarm`]: what the alarm does: follow the rules until they say wait.
//! * [`channels`]: ntfy, webhook and Web Push requests, built as data; the one
//!   send, and one attempt of one channel (`channels::attempt`).
//! * [`relay`]: the Durable Object holding a task's relay socket, for answers
//!   and the screens Show terminal asks for.
//! * [`live`]: the Durable Object per owner holding the sockets of the pages
//!   that show the list, which hear of every change at once; [`listing`]:
//!   the list as every reader sees it.
//! * [`config`]: the settings, from vars and secrets; [`limits`]: how much
//!   one owner, task or credential may hold or do.
//! * [`ids`]: random ids, credentials, their hashes, the clock.
//! * [`urls`]: URLs checked and cut by hand (no parser's tables in the wasm).
//! * [`panic`]: a panic's message and line in the log, beside the SDK's own hook.
//!
//! The views the API answers with, and the relay's messages, are
//! `needs_you_core::api` and `needs_you_core::relay_messages`: the command line reads
//! the same types.

mod alarm;
mod auth;
mod channels;
mod config;
mod delivery;
mod ids;
mod json;
mod limits;
mod listing;
mod live;
mod notifier;
mod panic;
mod question;
mod relay;
mod routes;
mod store;
mod urls;

use worker::{event, Context, Env, Request, Response, Result, ScheduleContext, ScheduledEvent};

pub use live::Live;
pub use notifier::Notifier;
pub use relay::Relay;

/// Once, when the module starts: before any request, alarm or message.
#[event(start)]
fn start() {
    panic::install();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    Ok(routes::handle(req, &env, &ctx).await)
}

/// The daily clean-up. An expired task can no longer report, so its open
/// questions are closed here, and their channels told like after any close.
/// Closed questions older than 30 days go, with their delivery records, so
/// the tables do not grow without bound.
#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    let now = ids::now_ms();
    match store::close_expired(&env, now).await {
        Ok(closed) => notifier::closed(&env, &closed).await,
        Err(e) => worker::console_error!("closing expired tasks' questions failed: {e}"),
    }
    match store::delete_old(&env, now).await {
        Ok(n) => worker::console_log!("clean-up: deleted {n} closed questions"),
        Err(e) => worker::console_error!("clean-up failed: {e}"),
    }
}
