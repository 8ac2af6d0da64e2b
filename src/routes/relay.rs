//! `GET /v1/relay`: the WebSocket through which a task's relay receives its
//! answers, Show terminal's asks and its rules to take back
//! ([`crate::relay`], the task's object that holds it).

use worker::{Env, Request};

use needs_you_core::relay::CAN_HEADER;

use crate::ids::now_ms;
use crate::json::{ApiError, ApiResult};
use crate::{auth, relay};

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
