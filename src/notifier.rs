//! One Durable Object per question, holding the alarm that notifies its owner.
//!
//! The Worker arms the object when a dialog or permission opens (due
//! `NOTIFY_DELAY_MS` after the server learned of it), disarms it when the
//! question closes unnotified, and wakes it at once when a notified question
//! closes so that the channels hear of the close. The alarm trusts nothing it
//! was told: it re-reads the question from D1 and acts on what it finds, so a
//! late or repeated alarm is harmless. Failed deliveries are retried by setting
//! the alarm again with exponential backoff; every attempt is recorded in D1.

use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{
    durable_object, js_sys, DurableObject, Env, Method, Request, RequestInit, Response, Result,
    ScheduledTime, State,
};

use needs_you_core::Kind;

use crate::channels::{send, Channel, Event};
use crate::config::{notify_delay_ms, retry_base_ms, MAX_ATTEMPTS};
use crate::ids::now_ms;
use crate::store::{self, AlarmView, Attempt, Closed};

/// What the Worker asks of a question's object. The object is named after its
/// question (`id_from_name`), and that name is all it keeps: an armed object's
/// only storage is its alarm.
#[derive(Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
enum Command {
    /// Notify at `due_at` unless the question closes first.
    Arm { due_at: f64 },
    /// The question closed before anyone was notified: nothing left to do.
    Disarm,
    /// A notified question closed: tell the channels now.
    Closed,
}

#[durable_object]
pub struct Notifier {
    state: State,
    env: Env,
}

impl DurableObject for Notifier {
    fn new(state: State, env: Env) -> Self {
        Notifier { state, env }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        crate::panic::install_hook();
        let storage = self.state.storage();
        match req.json::<Command>().await? {
            Command::Arm { due_at } => storage.set_alarm(at(due_at)).await?,
            Command::Disarm => storage.delete_alarm().await?,
            Command::Closed => storage.set_alarm(at(now_ms())).await?,
        }
        Response::empty()
    }

    async fn alarm(&self) -> Result<Response> {
        crate::panic::install_hook();
        // The runtime passes the name an object was reached by to its alarm.
        let Some(question_id) = self.state.id().name() else {
            worker::console_error!("a notifier alarm fired without its question's name");
            return Response::empty();
        };
        if let Some(next) = deliver(&self.env, &question_id).await? {
            self.state.storage().set_alarm(at(next)).await?;
        }
        Response::empty()
    }
}

fn at(ms: f64) -> ScheduledTime {
    ScheduledTime::new(js_sys::Date::new(&JsValue::from_f64(ms)))
}

// ---- the Worker's side ---------------------------------------------------------

/// Sends `cmd` to the question's object, once more if the first call fails:
/// the Worker has no other way to retry it (the report was already answered),
/// and every command is idempotent.
async fn command(env: &Env, question_id: &str, cmd: &Command) -> Result<()> {
    match call(env, question_id, cmd).await {
        Ok(()) => Ok(()),
        Err(_) => call(env, question_id, cmd).await,
    }
}

async fn call(env: &Env, question_id: &str, cmd: &Command) -> Result<()> {
    let stub = env
        .durable_object("NOTIFIER")?
        .id_from_name(question_id)?
        .get_stub()?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(JsValue::from_str(&serde_json::to_string(cmd)?)));
    let resp = stub
        .fetch_with_request(Request::new_with_init("https://notifier/", &init)?)
        .await?;
    if resp.status_code() >= 300 {
        return Err(worker::Error::RustError(format!(
            "notifier answered {}",
            resp.status_code()
        )));
    }
    Ok(())
}

pub async fn arm(env: &Env, question_id: &str, reported_at: f64) -> Result<()> {
    let due_at = reported_at + notify_delay_ms(env);
    command(env, question_id, &Command::Arm { due_at }).await
}

/// A question closed: disarm its alarm, or, if its owner was notified, wake it
/// to tell the channels. A reply was never armed: nothing to do.
pub async fn closed(env: &Env, q: &Closed) -> Result<()> {
    if !Kind::parse(&q.kind).is_some_and(Kind::notifies) {
        return Ok(());
    }
    let cmd = if q.notified_at.is_some() {
        Command::Closed
    } else {
        Command::Disarm
    };
    command(env, &q.id, &cmd).await
}

// ---- the alarm's work ------------------------------------------------------------

/// One pass over a question: notify if it is an open dialog past its delay,
/// tell the channels of a close if it was notified. Returns when to run again
/// (a retry, or an alarm that fired early), or `None` when done.
async fn deliver(env: &Env, question_id: &str) -> Result<Option<f64>> {
    let Some(mut view) = store::alarm_view(env, question_id).await? else {
        return Ok(None);
    };
    let now = now_ms();
    let mut retry_at = None;
    if view.question.closed_at.is_none() {
        let expired = view
            .question
            .task_expires_at
            .is_some_and(|t| t as f64 <= now);
        if expired || !Kind::parse(&view.question.kind).is_some_and(Kind::notifies) {
            return Ok(None);
        }
        let due = view.question.opened_at as f64 + notify_delay_ms(env);
        if now < due {
            return Ok(Some(due));
        }
        let pass = deliver_event(env, &view, Event::Open, now).await?;
        retry_at = pass.retry_at;
        // Notified once any channel has it, in this pass or an earlier one (an
        // earlier pass may have failed to record it).
        let notified = pass.any_ok || view.delivered(Event::Open);
        let closed_meanwhile = notified && store::mark_notified(env, question_id, now_ms()).await?;
        if !closed_meanwhile {
            return Ok(retry_at);
        }
        // The question closed while we were notifying: follow with the close now.
        match store::alarm_view(env, question_id).await? {
            Some(fresh) => view = fresh,
            None => return Ok(None),
        }
    }
    let pass = deliver_event(env, &view, Event::Close, now_ms()).await?;
    Ok(earliest(retry_at, pass.retry_at))
}

struct Pass {
    any_ok: bool,
    retry_at: Option<f64>,
}

/// Sends `event` to every channel that still needs it, once each. An open
/// stops as soon as the question is found closed: nothing is sent for a
/// question after its close.
async fn deliver_event(env: &Env, view: &AlarmView, event: Event, now: f64) -> Result<Pass> {
    let q = &view.question;
    let mut pass = Pass {
        any_ok: false,
        retry_at: None,
    };
    let mut first = true;
    for row in &view.channels {
        let done = view.summary(&row.kind, event).is_some_and(|a| a.ok != 0);
        let tried = view
            .summary(&row.kind, event)
            .map_or(0, |a| a.attempts as u32);
        // A close goes only to the channels that were told of the open.
        let wanted = match event {
            Event::Open => true,
            Event::Close => view
                .summary(&row.kind, Event::Open)
                .is_some_and(|a| a.ok != 0),
        };
        if done || !wanted || tried >= MAX_ATTEMPTS {
            continue;
        }
        // The first send follows the fresh read; later ones re-check, since a
        // slow channel before them gave the question time to close.
        if event == Event::Open && !first && store::is_closed(env, &q.id).await? {
            break;
        }
        first = false;
        let result = match Channel::from_stored(&row.kind, &row.config) {
            Ok(channel) => send(&channel.request(event, q, now)).await,
            Err(e) => Err(format!("bad configuration: {e}")),
        };
        let (ok, status, error) = match &result {
            Ok(code) if (200..300).contains(code) => (true, Some(*code), None),
            Ok(code) => (false, Some(*code), Some(format!("HTTP {code}"))),
            Err(e) => (false, None, Some(e.clone())),
        };
        let attempt = tried + 1;
        let record = Attempt {
            question_id: &q.id,
            channel: &row.kind,
            event: event.as_str(),
            attempt,
            ok,
            status,
            error: error.as_deref(),
        };
        // Not fatal: an error here would make the runtime retry the whole
        // alarm and send again what was just delivered.
        if let Err(e) = store::record_attempt(env, &record, now_ms()).await {
            worker::console_error!("could not record a delivery of {}: {e}", q.id);
        }
        if ok {
            pass.any_ok = true;
        } else if attempt < MAX_ATTEMPTS {
            let delay = retry_base_ms(env) * f64::from(1u32 << (attempt - 1).min(16));
            pass.retry_at = earliest(pass.retry_at, Some(now_ms() + delay));
        }
    }
    Ok(pass)
}

fn earliest(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}
