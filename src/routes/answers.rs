//! Answering from afar: `POST /v1/questions/{id}/answers` by its owner (or a
//! device of theirs allowed to answer), `GET /v1/answers/{id}` to follow it
//! (the task's relay receives them through its socket, [`super::relay`]).

use worker::{Context, Env, Request};

use serde_json::{Map, Value};

use needs_you_core::afar::{self, AnswerBody};
use needs_you_core::api::{self, Right};
use needs_you_core::sealed::{self, SealedText};

use crate::ids::{new_id, now_ms};
use crate::json::{ok, read_object, signed_field, ApiError, ApiResult};
use crate::limits::{self, Rate};
use crate::store::{self, NewAnswer, Queued, TakenBack};
use crate::{auth, live, relay};

/// `POST /v1/questions/{id}/answers`: `{text}` for a reply, `{decision:
/// "allow"|"deny"|<a lasting choice's id>, message?, digest}` for a permission, `{choices, digest}`
/// for a dialog; for a question whose words are sealed, the same with its
/// words left out (`{"text": ""}`, no message, `{"choices": []}`) and
/// `sealed` beside them, as the device sealed them; queued for the task's relay, which types a text into the
/// agent's tmux pane and hands a decision or choices to the agent's waiting
/// hook or plugin. Each is checked here against its question (its form, what
/// it takes, the request's digest), and again on the agent's machine.
pub async fn post(mut req: Request, env: &Env, ctx: &Context, question_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Answer)?;
    limits::within_rate(env, Rate::Answers, &person.credential_hash).await?;
    let mut fields = read_object(&mut req).await?;
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
    let signed = signed_field(&fields)?;
    let sealed = sealed_words(&mut fields)?;
    let body = serde_json::from_value::<AnswerBody>(Value::Object(fields)).map_err(|_| {
        ApiError::bad_request(
            "invalid_request",
            "an answer is {\"text\"}, {\"decision\": \"allow\", \"deny\" or a choice's id, \"message\"?, \"digest\"}, or {\"choices\": [[labels], …], \"digest\"}",
        )
    })?;
    let q = store::question(env, question_id)
        .await?
        .filter(|q| q.owner_id == person.owner_id)
        .ok_or_else(ApiError::not_found)?;
    let now = now_ms();
    let lasting: Vec<String> = q
        .decisions
        .iter()
        .filter(|o| o.lasting)
        .map(|o| o.id.clone())
        .collect();
    let asked = afar::Asked {
        kind: q.kind,
        open: q.closed_at.is_none() && !q.task_revoked && !q.task_expired(now),
        takes: q.answer_from_afar,
        why_not: q.why_not.as_deref(),
        digest: q.digest.as_deref(),
        questions: &q.questions,
        lasting: &lasting,
        words_sealed: q.sealed,
    };
    let afar::Admitted {
        body,
        digest,
        sealed,
    } = afar::admit(
        &asked,
        afar::Proposed {
            body,
            digest,
            sealed,
        },
    )
    .map_err(refused)?;
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
            signed: signed.as_ref(),
            sealed: sealed.as_deref(),
        },
        now,
    )
    .await?;
    match queued {
        Queued::Yes { task_id } => {
            live::changed(env, &person.owner_id).await;
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
        Queued::Gone => Err(refused(afar::Refusal::Closed)),
    }
}

/// An answer's sealed words, if it carries them (`sealed`: a `s1.…` text of
/// at most [`sealed::MAX_SEALED_ANSWER_CHARS`]), taken out of `fields`.
fn sealed_words(fields: &mut Map<String, Value>) -> Result<Option<String>, ApiError> {
    match fields.remove("sealed") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s))
            if s.len() <= sealed::MAX_SEALED_ANSWER_CHARS && SealedText::parse(&s).is_some() =>
        {
            Ok(Some(s))
        }
        Some(_) => Err(ApiError::bad_request(
            "invalid_request",
            "`sealed` is an answer's words sealed on the device (s1.…)",
        )),
    }
}

/// A refused answer, with its stable code.
fn refused(r: afar::Refusal) -> ApiError {
    ApiError::new(r.status(), r.code(), r.message())
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
            Some(a) => {
                live::changed(env, &person.owner_id).await;
                ok(200, &a)
            }
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
