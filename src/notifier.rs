//! One Durable Object per question, holding the alarm that notifies its
//! owner, and the commands the Worker sends it (arm, disarm, closed). What
//! the alarm does when it fires is [`crate::alarm`]'s.
//!
//! The Worker arms the object when a dialog or permission opens (due
//! `NOTIFY_DELAY_MS` after the server learned of it), disarms it when the
//! question closes unnotified, and wakes it at once when a notified question
//! closes so that the channels hear of the close. The alarm trusts nothing it
//! was told: it re-reads the question from D1 and follows the delivery rules
//! ([`crate::delivery`]), so a late or repeated alarm is harmless.
//!
//! An armed object keeps its question's id in its own storage: an object woken
//! by its alarm after an eviction or a restart is not told the name it was
//! reached by, so that stored id is how it remembers what to notify.

use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use worker::{
    durable_object, DurableObject, Env, Method, Request, RequestInit, Response, Result, State,
};

use crate::alarm;
use crate::config::{notify_delay_ms, Settings};
use crate::ids::{at, now_ms};
use crate::question::ClosedQuestion;

/// The storage key of the question id.
const QUESTION_KEY: &str = "question";
/// The storage key of a counter that every arm and close command raises: an
/// alarm that finds it changed after its run knows that a command came while
/// it was sending, and runs again rather than undo it.
const GENERATION_KEY: &str = "generation";

/// What the Worker asks of a question's object.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Command {
    /// Notify at `due_at` unless the question closes first.
    Arm { question_id: String, due_at: f64 },
    /// The question closed before anyone was notified: nothing left to do.
    Disarm,
    /// A notified question closed: tell the channels now.
    Closed { question_id: String },
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
        let storage = self.state.storage();
        let (question_id, due_at) = match req.json::<Command>().await? {
            Command::Arm {
                question_id,
                due_at,
            } => (question_id, due_at),
            Command::Closed { question_id } => (question_id, now_ms()),
            Command::Disarm => {
                storage.delete_alarm().await?;
                storage.delete_all().await?;
                return Response::empty();
            }
        };
        let generation = storage.get::<f64>(GENERATION_KEY).await?.unwrap_or(0.0) + 1.0;
        storage.put(QUESTION_KEY, question_id).await?;
        storage.put(GENERATION_KEY, generation).await?;
        storage.set_alarm(at(due_at)).await?;
        Response::empty()
    }

    /// A storage error is returned, so that the runtime tries the alarm again.
    async fn alarm(&self) -> Result<Response> {
        let storage = self.state.storage();
        let before = storage.get::<f64>(GENERATION_KEY).await?;
        let stored = storage.get::<String>(QUESTION_KEY).await?;
        // Objects armed before the id was stored only have their name, and
        // only while they were not evicted.
        let Some(question_id) = stored.or_else(|| self.state.id().name()) else {
            worker::console_error!("a notifier alarm fired without its question's id");
            return Response::empty();
        };
        let next = alarm::deliver(&self.env, &Settings::read(&self.env), &question_id).await?;
        // The object takes commands while its alarm waits on the network. One
        // that came meanwhile (a close, or a disarm that wiped the storage) may
        // need what this run did not do: run again now, rather than let the
        // result of this run replace its alarm or delete its storage.
        if storage.get::<f64>(GENERATION_KEY).await? != before {
            storage.put(QUESTION_KEY, &question_id).await?;
            storage.set_alarm(at(now_ms())).await?;
        } else if let Some(next) = next {
            storage.set_alarm(at(next)).await?;
        } else {
            storage.delete_all().await?;
        }
        Response::empty()
    }
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

/// A dialog or permission opened: notify its owner after the delay unless it
/// closes first. A failure is logged: the report itself was applied.
pub async fn arm(env: &Env, question_id: &str, reported_at: f64) {
    let due_at = reported_at + notify_delay_ms(env);
    let cmd = Command::Arm {
        question_id: question_id.to_owned(),
        due_at,
    };
    if let Err(e) = command(env, question_id, &cmd).await {
        worker::console_error!("could not arm the notifier of {question_id}: {e}");
    }
}

/// These open questions may be due sooner than their alarms say (their task
/// was unmuted): each alarm runs now, and the delivery rules decide.
pub async fn recheck(env: &Env, question_ids: &[String]) {
    for id in question_ids {
        let cmd = Command::Arm {
            question_id: id.clone(),
            due_at: now_ms(),
        };
        if let Err(e) = command(env, id, &cmd).await {
            worker::console_error!("could not reach the notifier of {id}: {e}");
        }
    }
}

/// These questions closed, whatever closed them: disarm each one's alarm, or,
/// if its owner was notified, wake it to tell the channels. A reply was never
/// armed: nothing to do. A failure is logged: the close itself was applied.
pub async fn closed(env: &Env, questions: &[ClosedQuestion]) {
    for q in questions.iter().filter(|q| q.kind.notifies()) {
        let cmd = match q.notified_at {
            Some(_) => Command::Closed {
                question_id: q.id.clone(),
            },
            None => Command::Disarm,
        };
        if let Err(e) = command(env, &q.id, &cmd).await {
            worker::console_error!("could not reach the notifier of {}: {e}", q.id);
        }
    }
}
