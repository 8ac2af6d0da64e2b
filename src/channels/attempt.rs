//! One attempt of one channel: the request built (Web Push with the Worker's
//! VAPID identity and fresh randomness), sent, and its outcome read and
//! recorded. The alarm and the test push both go through [`try_channel`].

use worker::Env;

use super::error::Failed;
use super::{send, webpush, Channel, Outgoing, WEBPUSH_PREFIX};
use crate::config::Settings;
use crate::delivery::{Event, Snapshot};
use crate::ids::{self, now_ms};
use crate::question::Question;
use crate::store::{self, Attempt};

/// How one attempt went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Delivered,
    /// Failed; the rules may try again.
    Failed,
    /// The push service says the subscription is gone (404, 410): it was
    /// dropped, and is never tried again.
    Gone,
}

/// One try of one channel: how it went, the HTTP status, and why it failed.
pub struct Tried {
    pub outcome: Outcome,
    pub status: Option<u16>,
    pub error: Option<String>,
}

/// Sends `event` of `q` to the channel stored as `kind`/`config`, once. A
/// push subscription whose service says it is gone is dropped here: the
/// alarm and the test push both go through this one place.
pub async fn try_channel(
    env: &Env,
    settings: &Settings,
    kind: &str,
    config: &str,
    event: Event,
    q: &Question,
    now: f64,
) -> Tried {
    let channel = Channel::from_stored(kind, config);
    let result = match &channel {
        Ok(channel) => match request(settings, channel, event, q, now).await {
            Ok(out) => send(&out, settings.send_timeout).await,
            Err(e) => Err(e),
        },
        Err(e) => Err(Failed(format!("bad configuration: {e}"))),
    };
    let push = matches!(channel, Ok(Channel::WebPush(_)));
    let (outcome, status, error) = match result {
        Ok(code) if (200..300).contains(&code) => (Outcome::Delivered, Some(code), None),
        Ok(code @ (404 | 410)) if push => (
            Outcome::Gone,
            Some(code),
            Some(format!("HTTP {code}: the subscription is gone; removed")),
        ),
        Ok(code) => (Outcome::Failed, Some(code), Some(format!("HTTP {code}"))),
        Err(e) => (Outcome::Failed, None, Some(e.0)),
    };
    if outcome == Outcome::Gone {
        let device_id = kind.trim_start_matches(WEBPUSH_PREFIX);
        if let Err(e) = store::drop_gone_push(env, device_id, config, now_ms()).await {
            worker::console_error!("could not drop the push subscription of {device_id}: {e}");
        }
    }
    Tried {
        outcome,
        status,
        error,
    }
}

/// Sends one event to one channel and records the attempt.
pub async fn attempt(
    env: &Env,
    settings: &Settings,
    snap: &Snapshot,
    kind: &str,
    config: &str,
    event: Event,
    now: f64,
) -> Outcome {
    let q = &snap.question;
    let tried = try_channel(env, settings, kind, config, event, q, now).await;
    let record = Attempt {
        question_id: &q.question_id,
        channel: kind,
        event,
        attempt: snap.tried(kind, event) + 1,
        ok: tried.outcome == Outcome::Delivered,
        status: tried.status,
        error: tried.error.as_deref(),
        quieted_by: q.quieted_by.as_deref().filter(|_| q.quiet),
    };
    // Not fatal: an error here would make the runtime retry the whole alarm
    // and send again what was just delivered.
    if let Err(e) = store::record_attempt(env, &record, now_ms()).await {
        worker::console_error!("could not record a delivery of {}: {e}", q.question_id);
    }
    tried.outcome
}

/// The channel's request; for Web Push sealed and signed with the Worker's
/// VAPID key, a fresh ephemeral key and salt.
async fn request(
    settings: &Settings,
    channel: &Channel,
    event: Event,
    q: &Question,
    now: f64,
) -> std::result::Result<Outgoing, Failed> {
    let Channel::WebPush(sub) = channel else {
        return channel.request(event, q, now, None);
    };
    if !settings.push_services.allow(&sub.endpoint) {
        return Err("the subscription's endpoint is not a known push service".into());
    }
    let vapid = match &settings.vapid {
        Some(v) => v.as_ref().map_err(Clone::clone)?,
        None => return channel.request(event, q, now, None),
    };
    let key = vapid.key().await?;
    let now_s = (now / 1000.0) as u64;
    let sealed = webpush::seal(sub, event, q, &key, now_s, &ids::random_bytes()).await?;
    channel.request(event, q, now, Some(&sealed))
}
