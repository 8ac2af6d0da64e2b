//! Tasks: an owner (or a device of theirs, such as the `needs-you` command
//! line) creates, lists and revokes them; a task asks who it is.

use needs_you_core::api::{self, Right};
use needs_you_core::sealed::SealedText;
use serde_json::{json, Value};
use worker::{Env, Request};

use crate::ids::{new_id, new_token, now_ms, sha256_hex, TASK_PREFIX};
use crate::json::{name_field, ok, read_object, ApiError, ApiResult};
use crate::store::{self, TaskRow};
use crate::{auth, limits, live, notifier, relay};

pub const MAX_NAME_CHARS: usize = needs_you_core::api::MAX_TASK_NAME_CHARS;
/// The longest expiry accepted: a year.
pub const MAX_EXPIRES_IN_S: u64 = 365 * 24 * 3600;
/// A task's life when none is asked for: a week. A credential that nobody
/// revokes (a wrapper killed, a script that forgot) must not work forever.
pub const DEFAULT_EXPIRES_IN_S: u64 = 7 * 24 * 3600;

/// `POST /v1/tasks {name, expires_in_s?, screen?}`: the credential is shown
/// once. `screen: false` makes a task whose panes are never shown.
/// `name_sealed: true` in place of a name makes one whose name is empty
/// until its maker seals it for its id ([`name`]).
pub async fn create(mut req: Request, env: &Env) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Tasks)?;
    let body = read_object(&mut req).await?;
    let name = match body.get("name_sealed") {
        Some(Value::Bool(true)) if !body.contains_key("name") => String::new(),
        None => name_field(&body, "name", MAX_NAME_CHARS)?,
        Some(_) => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "`name_sealed` is true, in place of a name",
            ))
        }
    };
    let now = now_ms();
    let expires_at = match body.get("expires_in_s") {
        None | Some(Value::Null) => now + DEFAULT_EXPIRES_IN_S as f64 * 1000.0,
        Some(v) => match v.as_u64() {
            Some(s @ 1..=MAX_EXPIRES_IN_S) => now + s as f64 * 1000.0,
            _ => {
                return Err(ApiError::bad_request(
                    "invalid_request",
                    format!(
                    "`expires_in_s` must be a whole number of seconds from 1 to {MAX_EXPIRES_IN_S}"
                ),
                ))
            }
        },
    };
    let screen = match body.get("screen") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "`screen` must be true or false",
            ))
        }
    };
    let (id, credential) = (new_id("tsk_"), new_token(TASK_PREFIX));
    let hash = sha256_hex(credential.as_bytes());
    let made = store::create_task(
        env,
        &TaskRow {
            id: &id,
            owner_id: &person.owner_id,
            name: &name,
            credential_hash: &hash,
            expires_at,
            created_by: person.device_id.as_deref(),
            screen,
        },
        now,
    )
    .await?;
    if !made {
        return Err(ApiError::new(
            409,
            "too_many_tasks",
            format!(
                "this owner has {} live tasks already: revoke some (`needs-you tasks`), or let them expire",
                limits::TASKS_PER_OWNER
            ),
        ));
    }
    live::changed(env, &person.owner_id).await;
    ok(
        201,
        &api::NewTask {
            task_id: id,
            name,
            credential,
            expires_at: Some(expires_at as i64),
        },
    )
}

/// `GET /v1/tasks`: the owner's live tasks with their state.
pub async fn list(req: Request, env: &Env) -> ApiResult {
    let person = auth::person(&req, env).await?;
    let now = now_ms();
    let mut tasks = store::list_tasks(env, &person.owner_id, now).await?;
    let rules = store::rules_of_owner(env, &person.owner_id, now, true).await?;
    store::on_their_tasks(&mut tasks, rules);
    ok(200, &api::Tasks { tasks })
}

/// `DELETE /v1/tasks/{id}`: the credential stops working at once, and the
/// task's open questions close.
pub async fn revoke(req: Request, env: &Env, task_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Tasks)?;
    let closed = store::revoke_task(env, &person.owner_id, task_id, now_ms())
        .await?
        .ok_or_else(ApiError::not_found)?;
    notifier::closed(env, &closed).await;
    relay::revoked(env, task_id).await;
    live::changed(env, &person.owner_id).await;
    ok(
        200,
        &json!({"task_id": task_id, "revoked": true, "closed_questions": closed.len()}),
    )
}

/// `PUT /v1/tasks/{id}/name {"sealed": "s1.…"}`: the name of a task made
/// with `name_sealed`, as its maker sealed it
/// ([`needs_you_core::sealed::field::TASK`], scope its id), once. Another
/// owner's task, one not live, one with a name in the clear or named
/// already: 404.
pub async fn name(mut req: Request, env: &Env, task_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Tasks)?;
    let body = read_object(&mut req).await?;
    let sealed = match body.get("sealed") {
        Some(Value::String(s))
            if s.len() <= MAX_SEALED_NAME_CHARS && SealedText::parse(s).is_some() =>
        {
            s.clone()
        }
        _ => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "`sealed` is the task's name sealed on the device (s1.…)",
            ))
        }
    };
    if !store::name_task(env, &person.owner_id, task_id, &sealed, now_ms()).await? {
        return Err(ApiError::not_found());
    }
    live::changed(env, &person.owner_id).await;
    ok(200, &json!({"task_id": task_id, "sealed_name": sealed}))
}

/// The longest sealed task name: [`MAX_NAME_CHARS`] characters of four
/// bytes, sealed.
const MAX_SEALED_NAME_CHARS: usize = needs_you_core::sealed::max_sealed_chars(MAX_NAME_CHARS * 4);

/// The longest mute: a day. A mute that nobody ends ends by itself.
pub const MAX_MUTE_S: u64 = 24 * 3600;

/// `PUT /v1/tasks/{id}/mute {"for_s": 3600}`: the task's questions are listed
/// as ever but ring nobody for that long (`for_s: 0` ends a mute). A question
/// still open when the mute ends rings then.
pub async fn mute(mut req: Request, env: &Env, task_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Tasks)?;
    let body = read_object(&mut req).await?;
    let for_s = match body.get("for_s").and_then(Value::as_u64) {
        Some(s @ 0..=MAX_MUTE_S) => s,
        _ => {
            return Err(ApiError::bad_request(
                "invalid_request",
                format!("`for_s` must be a whole number of seconds from 0 to {MAX_MUTE_S}"),
            ))
        }
    };
    let now = now_ms();
    let until = (for_s > 0).then_some(now + for_s as f64 * 1000.0);
    let open = store::mute_task(env, &person.owner_id, task_id, until, now)
        .await?
        .ok_or_else(ApiError::not_found)?;
    // Unmuted: what the mute held back rings now, not when the mute would have ended.
    if until.is_none() {
        notifier::recheck(env, &open).await;
    }
    live::changed(env, &person.owner_id).await;
    ok(
        200,
        &json!({"task_id": task_id, "muted_until": until.map(|u| u as i64)}),
    )
}

/// `GET /v1/task`: who am I, for a task credential.
pub async fn whoami(req: Request, env: &Env) -> ApiResult {
    let task = auth::task(&req, env, now_ms()).await?;
    ok(
        200,
        &api::TaskIdentity {
            task_id: task.id,
            name: task.name,
        },
    )
}
