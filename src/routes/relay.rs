//! `GET /v1/relay`: the WebSocket through which a task's relay receives its
//! answers, Show terminal's asks and its rules to take back
//! ([`crate::relay`], the task's object that holds it).

use worker::{Env, Request};

use needs_you_core::relay_messages::CAN_HEADER;

use crate::ids::now_ms;
use crate::json::{websocket_upgrade, ApiResult};
use crate::{auth, relay};

/// `GET /v1/relay` with `Upgrade: websocket` and a task credential.
pub async fn connect(req: Request, env: &Env) -> ApiResult {
    let task = auth::task(&req, env, now_ms()).await?;
    websocket_upgrade(&req, "the relay's connection")?;
    let can = req.headers().get(CAN_HEADER)?.unwrap_or_default();
    Ok(relay::connect(env, &task.id, &can).await?)
}
