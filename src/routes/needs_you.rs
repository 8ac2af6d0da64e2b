//! `GET /v1/needs-you`: the owner's open questions, newest first.

use serde_json::json;
use worker::{Env, Request};

use crate::api::{ok, ApiResult};
use crate::ids::now_ms;
use crate::{auth, store};

pub async fn list(req: Request, env: &Env) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let questions = store::needs_you(env, &owner.id, now_ms()).await?;
    ok(200, &json!({"questions": questions}))
}
