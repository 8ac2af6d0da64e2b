//! An owner's notification channels.

use needs_you_core::api;
use serde::Deserialize;
use worker::{Env, Result};

use super::sql::{changes, db, n, s, stmt};

/// Sets the owner's channel of a kind. Binds ?1 owner id, ?2 kind,
/// ?3 config (JSON), ?4 now.
const PUT_CHANNEL: &str = "
INSERT INTO channels (owner_id, kind, config, updated_at) VALUES (?1, ?2, ?3, ?4)
ON CONFLICT (owner_id, kind) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at";

pub async fn put_channel(
    env: &Env,
    owner_id: &str,
    kind: &str,
    config: &str,
    now: f64,
) -> Result<()> {
    let db = db(env)?;
    let args = [s(owner_id), s(kind), s(config), n(now)];
    stmt(&db, PUT_CHANNEL, &args)?.run().await?;
    Ok(())
}

/// Binds ?1 owner id, ?2 kind.
const DELETE_CHANNEL: &str = "DELETE FROM channels WHERE owner_id = ?1 AND kind = ?2";

pub async fn delete_channel(env: &Env, owner_id: &str, kind: &str) -> Result<bool> {
    let db = db(env)?;
    let r = stmt(&db, DELETE_CHANNEL, &[s(owner_id), s(kind)])?
        .run()
        .await?;
    Ok(changes(&r)? > 0)
}

#[derive(Deserialize)]
pub struct ChannelRow {
    pub kind: String,
    pub config: String,
    #[serde(flatten)]
    pub outcome: api::ChannelOutcome,
}

/// The owner's channels with their last delivery outcome. Binds ?1 the owner id.
const CHANNELS: &str = "
SELECT kind, config, last_success_at, last_failure_at, last_error
FROM channels WHERE owner_id = ?1 ORDER BY kind";

pub async fn channels(env: &Env, owner_id: &str) -> Result<Vec<ChannelRow>> {
    let db = db(env)?;
    stmt(&db, CHANNELS, &[s(owner_id)])?.all().await?.results()
}
