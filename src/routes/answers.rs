//! Answering from afar: `POST /v1/questions/{id}/answers` by its owner (or a
//! device of theirs allowed to answer), `GET /v1/answers/{id}` to follow it,
//! and `GET /v1/relay`, the WebSocket through which the task's relay
//! receives its answers ([`crate::relay`]).

use worker::{Context, Env, Request};

use serde_json::Value;

use needs_you_core::afar::{self, Afar, AnswerBody};
use needs_you_core::answer;
use needs_you_core::api::{self, Right};
use needs_you_core::relay::CAN_HEADER;
use needs_you_core::Kind;

use crate::ids::{new_id, now_ms};
use crate::json::{ok, read_object, ApiError, ApiResult};
use crate::limits::{self, Rate};
use crate::store::{self, NewAnswer, Queued, TakenBack};
use crate::{auth, relay};

/// `POST /v1/questions/{id}/answers`: `{text}` for a reply, `{decision:
/// "allow"|"deny", message?, digest}` for a permission, `{choices, digest}`
/// for a dialog; queued for the task's relay, which types a text into the
/// agent's tmux pane and hands a decision or choices to the agent's waiting
/// hook or plugin. Each is checked here against its question (its form, what
/// it takes, the request's digest), and again on the agent's machine.
pub async fn post(mut req: Request, env: &Env, ctx: &Context, question_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Answer)?;
    limits::within_rate(env, Rate::Answers, &person.credential_hash).await?;
    let fields = read_object(&mut req).await?;
    let digest = match fields.get("digest") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.clone()),
        Some(_) => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "`digest` must be a string",
            ))
        }
    };
    let body = match serde_json::from_value::<AnswerBody>(Value::Object(fields)) {
        Ok(AnswerBody::Text { text }) => AnswerBody::Text {
            text: answer::check(&text).map_err(|why| ApiError::bad_request("refused_answer", why))?,
        },
        Ok(AnswerBody::Decision { decision, message }) => AnswerBody::Decision {
            decision,
            message: message.map(|m| needs_you_core::text::line(&m)).filter(|m| !m.is_empty()),
        },
        Ok(other) => other,
        Err(_) => {
            return Err(ApiError::bad_request(
                "invalid_request",
                "an answer is {\"text\"}, {\"decision\": \"allow\" or \"deny\", \"message\"?}, or {\"choices\": [[labels], …]}",
            ))
        }
    };
    let q = store::question(env, question_id)
        .await?
        .filter(|q| q.owner_id == person.owner_id)
        .ok_or_else(ApiError::not_found)?;
    let now = now_ms();
    if q.closed_at.is_some() || q.task_revoked || q.task_expired(now) {
        return Err(ApiError::new(
            409,
            "closed",
            "that question is closed already",
        ));
    }
    if q.answer_from_afar.is_none() {
        let code = match q.kind {
            Kind::Reply => "not_answerable",
            _ => "answer_in_terminal",
        };
        let why = q.why_not.clone().unwrap_or_default();
        return Err(ApiError::new(
            409,
            code,
            format!(
                "this {} cannot be answered from afar: {why}; answer it there",
                q.kind
            ),
        ));
    }
    if let Some(why) = afar::check(&body, q.kind, q.answer_from_afar, &q.questions) {
        return Err(ApiError::new(409, "wrong_answer", why));
    }
    // A decision or choices answer one request: the one the person saw.
    let digest = match body.form() {
        Afar::Text => None,
        _ => {
            if digest.is_none() || digest != q.digest {
                return Err(ApiError::new(
                    409,
                    "changed",
                    "this dialog is not the one the answer was made for any more: look again",
                ));
            }
            digest
        }
    };
    let answer_id = new_id("ans_");
    let queued = store::queue_answer(
        env,
        &NewAnswer {
            id: &answer_id,
            question_id,
            owner_id: &person.owner_id,
            device_id: person.device_id.as_deref(),
            body: &body,
            digest: digest.as_deref(),
        },
        now,
    )
    .await?;
    match queued {
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
                    text: body.summary(),
                    form: body.form(),
                },
            )
        }
        Queued::Pending => Err(ApiError::new(
            409,
            "answer_pending",
            "an answer to this question is already on its way",
        )),
        Queued::Gone => Err(ApiError::new(
            409,
            "closed",
            "that question can no longer be answered",
        )),
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

/// `DELETE /v1/answers/{id}`: takes back an answer the agent's machine never
/// had (still `queued`), by its owner or a device allowed to answer. One the
/// machine has already, or that ended: 409 `not_queued`; another owner's: 404.
pub async fn take_back(req: Request, env: &Env, answer_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Answer)?;
    match store::take_back(env, &person.owner_id, answer_id, now_ms()).await? {
        TakenBack::Yes => match store::answer_of_owner(env, &person.owner_id, answer_id).await? {
            Some(a) => ok(200, &a),
            None => Err(ApiError::not_found()),
        },
        TakenBack::No => match store::answer_of_owner(env, &person.owner_id, answer_id).await? {
            Some(a) if a.state == api::AnswerState::Failed => Err(ApiError::new(
                409,
                "not_queued",
                format!(
                    "this answer is no longer on its way: {}",
                    a.reason.unwrap_or_default()
                ),
            )),
            Some(_) => Err(ApiError::new(
                409,
                "not_queued",
                "the agent's machine has this answer already: it can no longer be taken back",
            )),
            None => Err(ApiError::not_found()),
        },
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
    let can = req.headers().get(CAN_HEADER)?.unwrap_or_default();
    Ok(relay::connect(env, &task.id, &can).await?)
}
