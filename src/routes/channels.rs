//! Notification channels: `PUT`, `GET` and `DELETE /v1/channels/{kind}`, and
//! `POST /v1/channels/test`.

use serde_json::json;
use worker::{Env, Request};

use needs_you_core::api::{self, ChannelKind};
use needs_you_core::{Cli, Kind};

use crate::channels::attempt::{try_channel, Outcome};
use crate::channels::{Channel, WEBPUSH_PREFIX};
use crate::config::Settings;
use crate::delivery::Event;
use crate::ids::now_ms;
use crate::json::{ok, read_object, ApiError, ApiResult};
use crate::question::Question;
use crate::{auth, store};

fn known_kind(kind: &str) -> Result<ChannelKind, ApiError> {
    ChannelKind::parse(kind).ok_or_else(|| {
        ApiError::new(
            404,
            "unknown_channel",
            format!(
                "no channel kind {kind:?}; use one of {}",
                ChannelKind::choices()
            ),
        )
    })
}

pub async fn put(mut req: Request, env: &Env, kind: &str) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let kind = known_kind(kind)?;
    let body = read_object(&mut req).await?;
    let channel = Channel::from_config(kind, &body)
        .map_err(|m| ApiError::bad_request("invalid_channel", m.to_string()))?;
    store::put_channel(
        env,
        &owner.id,
        kind.as_str(),
        &channel.stored().to_string(),
        now_ms(),
    )
    .await?;
    ok(200, &channel.public())
}

pub async fn list(req: Request, env: &Env) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let channels: Vec<api::Channel> = store::channels(env, &owner.id)
        .await?
        .into_iter()
        .filter_map(|row| {
            let settings = Channel::from_stored(&row.kind, &row.config)
                .ok()?
                .public()?;
            // Why a phone stopped ringing: the last delivery that worked and
            // the last that did not, with its error.
            Some(api::Channel {
                settings,
                outcome: Some(row.outcome),
            })
        })
        .collect();
    ok(200, &api::Channels { channels })
}

pub async fn delete(req: Request, env: &Env, kind: &str) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let kind = known_kind(kind)?;
    if !store::delete_channel(env, &owner.id, kind.as_str()).await? {
        return Err(ApiError::not_found());
    }
    ok(200, &json!({"kind": kind, "deleted": true}))
}

/// `POST /v1/channels/test`: a test notification through every channel that
/// would hear of the owner's next question, each device's Web Push included,
/// sent now; says which answered. Nothing is recorded: there is no question.
pub async fn test(req: Request, env: &Env) -> ApiResult {
    let owner = auth::owner(&req, env).await?;
    let now = now_ms();
    let q = Question::open(
        &crate::ids::new_id("test_"),
        "needs-you test",
        Cli::ClaudeCode,
        Kind::Dialog,
        "A test notification: this channel reaches you.",
        now as i64,
    );
    let settings = Settings::read(env);
    let mut results = Vec::new();
    for row in store::channels_of_owner(env, &owner.id).await? {
        let tried = try_channel(env, &settings, &row.kind, &row.config, Event::Open, &q, now).await;
        let name = if row.kind.starts_with(WEBPUSH_PREFIX) {
            format!("browser: {}", row.name)
        } else {
            row.name.clone()
        };
        results.push(api::TestResult {
            channel: row.kind,
            name,
            ok: tried.outcome == Outcome::Delivered,
            status: tried.status,
            error: tried.error,
        });
    }
    ok(200, &api::TestResults { results })
}
