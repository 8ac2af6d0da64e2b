//! `GET /v1/needs-you`: the owner's open questions, newest first; and one
//! question's delivery log.

use serde_json::json;
use worker::{Env, Request};

use crate::api::{ok, ApiError, ApiResult};
use crate::ids::now_ms;
use crate::{auth, store};

pub async fn list(req: Request, env: &Env) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let questions = store::needs_you(env, &owner.id, now_ms()).await?;
    ok(200, &json!({"questions": questions}))
}

/// `GET /v1/questions/{id}/deliveries`: every delivery attempt for one of the
/// owner's questions, oldest first.
pub async fn deliveries(req: Request, env: &Env, question_id: &str) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let log = store::delivery_log(env, &owner.id, question_id)
        .await?
        .ok_or_else(ApiError::not_found)?;
    ok(200, &json!({"question_id": question_id, "deliveries": log}))
}
