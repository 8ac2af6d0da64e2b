//! Answering a reply question from afar: `POST /v1/questions/{id}/answers`
//! by its owner (or a device of theirs), `GET /v1/answers/{id}` to follow
//! it, and `GET /v1/relay`, the WebSocket
//! through which the task's relay receives its answers ([`crate::relay`]).

use worker::{Context, Env, Request};

use needs_you_core::answer;
use needs_you_core::api::{self, Right};

use crate::ids::{new_id, now_ms};
use crate::json::{ok, read_object, ApiError, ApiResult};
use crate::limits::{self, Rate};
use crate::store::{self, Queued};
use crate::{auth, relay};

/// `POST /v1/questions/{id}/answers {text}`: queued for the task's relay,
/// which types it into the agent's tmux pane.
pub async fn post(mut req: Request, env: &Env, ctx: &Context, question_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Answer)?;
    limits::within_rate(env, Rate::Answers, &person.credential_hash).await?;
    let body = read_object(&mut req).await?;
    let text = match body.get("text") {
        Some(serde_json::Value::String(t)) => {
            answer::check(t).map_err(|why| ApiError::bad_request("refused_answer", why))?
        }
        _ => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "`text` must be the answer, a string",
            ))
        }
    };
    let answer_id = new_id("ans_");
    let now = now_ms();
    match store::queue_answer(env, &person.owner_id, question_id, &answer_id, &text, now).await? {
        Queued::Yes { task_id } => {
            let env2 = env.clone();
            let id = answer_id.clone();
            ctx.wait_until(async move { relay::deliver(&env2, &task_id, &id).await });
            ok(
                201,
                &api::Queued {
                    answer_id,
                    question_id: question_id.to_owned(),
                    state: api::AnswerState::Queued,
                    text,
                },
            )
        }
        Queued::NotFound => Err(ApiError::not_found()),
        Queued::No(a) => {
            let why = if a.closed_at.is_some() || a.task_gone != 0 {
                ("closed", "that question is closed already".to_owned())
            } else if a.kind != "reply" {
                (
                    "answer_in_terminal",
                    format!(
                        "a {} waits on keys in its terminal: answer it there",
                        a.kind
                    ),
                )
            } else if a.answerable == 0 {
                let where_ = match a.terminal.as_deref() {
                    None => "its reporter did not say where it runs (an older report-prompt)",
                    Some(_) => "its agent is not running in tmux",
                };
                (
                    "not_answerable",
                    format!("this question cannot be answered from afar: {where_}"),
                )
            } else if a.pending != 0 {
                (
                    "answer_pending",
                    "an answer to this question is already on its way".to_owned(),
                )
            } else {
                (
                    "closed",
                    "that question can no longer be answered".to_owned(),
                )
            };
            Err(ApiError::new(409, why.0, why.1))
        }
    }
}

/// `GET /v1/answers/{id}`: the answer's state, also once its question has
/// closed (the list shows only open ones). Another owner's: 404.
pub async fn get(req: Request, env: &Env, answer_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    match store::answer_of_owner(env, &person.owner_id, answer_id).await? {
        Some(a) => ok(200, &a),
        None => Err(ApiError::not_found()),
    }
}

/// `GET /v1/relay` with `Upgrade: websocket` and a task credential.
pub async fn connect(req: Request, env: &Env) -> ApiResult {
    let task = auth::task(&req, env, now_ms()).await?;
    let upgrade = req.headers().get("upgrade")?.unwrap_or_default();
    if !upgrade.eq_ignore_ascii_case("websocket") {
        return Err(ApiError::new(
            426,
            "upgrade_required",
            "the relay connects with a WebSocket (Upgrade: websocket)",
        ));
    }
    Ok(relay::connect(env, &task.id).await?)
}
