//! The needs-you Worker.
//!
//! Agents' reporters `POST /v1/reports`; owners read `GET /v1/needs-you`. D1 holds
//! owners, tasks, questions, channels and delivery attempts; one Durable Object per
//! question ([`notifier::Notifier`]) holds the alarm that notifies the owner's phone
//! when a dialog is still open `NOTIFY_DELAY_MS` after it was reported.
//!
//! * [`routes`]: the HTTP API, one module per resource.
//! * [`auth`]: credentials: who is calling.
//! * [`store`]: every D1 statement, and the report's one atomic batch.
//! * [`notifier`]: the Durable Object and its alarm.
//! * [`channels`]: ntfy and webhook deliveries.
//! * [`api`]: JSON responses and the error type every route returns.

mod api;
mod auth;
mod channels;
mod config;
mod ids;
mod notifier;
mod panic;
mod routes;
mod store;

use worker::{event, Context, Env, Request, Response, Result, ScheduleContext, ScheduledEvent};

pub use notifier::Notifier;

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    panic::install_hook();
    Ok(routes::handle(req, &env, &ctx).await)
}

/// The daily clean-up: closed questions older than 30 days go, with their
/// delivery records, so the tables do not grow without bound.
#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    panic::install_hook();
    match store::delete_old_questions(&env, ids::now_ms()).await {
        Ok(n) => worker::console_log!("clean-up: deleted {n} closed questions"),
        Err(e) => worker::console_error!("clean-up failed: {e}"),
    }
}
