//! `POST /v1/owners`: the admin creates an owner; the token is shown once.

use serde_json::json;
use worker::{Env, Request};

use crate::api::{name_field, ok, read_object, ApiResult};
use crate::ids::{new_id, new_token, now_ms, sha256_hex, OWNER_PREFIX};
use crate::{auth, store};

pub const MAX_NAME_CHARS: usize = 100;

pub async fn create(mut req: Request, env: &Env) -> ApiResult {
    auth::admin(&req, env)?;
    let body = read_object(&mut req).await?;
    let name = name_field(&body, "name", MAX_NAME_CHARS)?;
    let (id, token) = (new_id("own_"), new_token(OWNER_PREFIX));
    store::create_owner(env, &id, &name, &sha256_hex(token.as_bytes()), now_ms()).await?;
    ok(201, &json!({"owner_id": id, "name": name, "token": token}))
}
