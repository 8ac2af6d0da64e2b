//! `POST /v1/owners`: the admin creates an owner; the token is shown once.
//! `POST /v1/owners/me/token`: an owner replaces a token that may have leaked.

use needs_you_core::api;
use worker::{Env, Request};

use crate::ids::{new_id, new_token, now_ms, sha256_hex, OWNER_PREFIX};
use crate::json::{name_field, ok, read_object, ApiError, ApiResult};
use crate::{auth, live, store};

pub const MAX_NAME_CHARS: usize = 100;

pub async fn create(mut req: Request, env: &Env) -> ApiResult {
    auth::admin(&req, env)?;
    let body = read_object(&mut req).await?;
    let name = name_field(&body, "name", MAX_NAME_CHARS)?;
    let (id, token) = (new_id("own_"), new_token(OWNER_PREFIX));
    store::create_owner(env, &id, &name, &sha256_hex(token.as_bytes()), now_ms()).await?;
    ok(
        201,
        &api::NewOwner {
            owner_id: id,
            name,
            token,
        },
    )
}

/// `POST /v1/owners/me/token`: a new owner token, shown once; the one the
/// request came with stops working at once, and the answers it sent that no
/// agent took yet fail. Devices and tasks are untouched: they have
/// credentials of their own.
pub async fn rotate(req: Request, env: &Env) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let token = new_token(OWNER_PREFIX);
    let new_hash = sha256_hex(token.as_bytes());
    if !store::rotate_owner_token(env, &owner.id, &owner.token_hash, &new_hash, now_ms()).await? {
        return Err(ApiError::unauthorized(
            "the owner token was replaced meanwhile",
        ));
    }
    live::signed_out(env, &owner.id, live::Reader::OwnerToken(&owner.token_hash)).await;
    live::changed(env, &owner.id).await;
    ok(
        200,
        &api::NewToken {
            owner_id: owner.id,
            token,
        },
    )
}
