//! Where an owner is notified, and how a delivery is sent.
//!
//! Each channel turns a question event into an [`Outgoing`] request with pure
//! code ([`ntfy`], [`webhook`], [`webpush`], on what `outgoing` holds for them
//! all), so what goes on the wire is
//! decided in one place and tested without a network; [`send`] is the only
//! I/O besides the WebCrypto calls that seal a push ([`subtle`]), and
//! [`attempt`] one try of one channel, recorded. What goes wrong says whose it
//! is to fix (`error`): settings, a subscription or a secret [`Refused`], or a
//! delivery [`Failed`].
//!
//! ntfy and the webhook are set by the owner, one of each at most. Web Push is
//! a channel per paired device that subscribed: its name is `webpush:<device
//! id>`, and the alarm finds it beside the owner's other channels.

pub mod attempt;
mod error;
pub mod ntfy;
mod outgoing;
mod subtle;
pub mod webhook;
pub mod webpush;

use std::time::Duration;

use serde_json::{Map, Value};

use needs_you_core::api;
use worker::{
    wasm_bindgen_futures, AbortController, Delay, Fetch, Headers, Method, Request, RequestInit,
    RequestRedirect,
};

use crate::delivery::Event;
use crate::question::Question;
pub use error::{Failed, Refused};
pub use outgoing::Outgoing;

/// The name of a device's Web Push channel starts with this, then its id.
pub const WEBPUSH_PREFIX: &str = "webpush:";

/// A channel's stored configuration, parsed.
pub enum Channel {
    Ntfy(ntfy::Ntfy),
    Webhook(webhook::Webhook),
    WebPush(webpush::Subscription),
}

impl Channel {
    /// Validates a configuration sent by an owner.
    pub fn from_config(
        kind: api::ChannelKind,
        config: &Map<String, Value>,
    ) -> Result<Channel, Refused> {
        match kind {
            api::ChannelKind::Ntfy => ntfy::Ntfy::from_config(config).map(Channel::Ntfy),
            api::ChannelKind::Webhook => {
                webhook::Webhook::from_config(config).map(Channel::Webhook)
            }
        }
    }

    /// Parses a configuration stored by [`Channel::stored`], or a device's
    /// stored push subscription.
    pub fn from_stored(kind: &str, stored: &str) -> Result<Channel, Refused> {
        if kind.starts_with(WEBPUSH_PREFIX) {
            return serde_json::from_str(stored)
                .map(Channel::WebPush)
                .map_err(|e| Refused(format!("the stored subscription is unreadable: {e}")));
        }
        let kind = api::ChannelKind::parse(kind)
            .ok_or_else(|| Refused(format!("the stored channel kind {kind:?} is unknown")))?;
        match serde_json::from_str::<Value>(stored) {
            Ok(Value::Object(map)) => Channel::from_config(kind, &map),
            _ => Err("the stored configuration is not a JSON object".into()),
        }
    }

    /// The configuration to store (secrets included: they are needed to send).
    pub fn stored(&self) -> Value {
        match self {
            Channel::Ntfy(c) => serde_json::to_value(c),
            Channel::Webhook(c) => serde_json::to_value(c),
            Channel::WebPush(c) => serde_json::to_value(c),
        }
        .unwrap_or(Value::Null)
    }

    /// What an owner may read back of a channel they set: never a token or
    /// a secret. A device's push subscription is no owner's to read.
    pub fn public(&self) -> Option<api::ChannelSettings> {
        match self {
            Channel::Ntfy(c) => Some(api::ChannelSettings::Ntfy {
                url: c.url.clone(),
                priority: c.priority,
                click: c.click.clone(),
                has_token: c.token.is_some(),
                words: c.words,
            }),
            Channel::Webhook(c) => Some(api::ChannelSettings::Webhook {
                url: c.url.clone(),
                has_secret: true,
                words: c.words,
            }),
            Channel::WebPush(_) => None,
        }
    }

    /// The request for `event` of `q` at `now` (ms). Web Push needs the
    /// message sealed and signed for its subscription in `push`
    /// ([`webpush::seal`]); without it (no `VAPID_PRIVATE_KEY`) its delivery
    /// fails with a reason.
    pub fn request(
        &self,
        event: Event,
        q: &Question,
        now: f64,
        push: Option<&webpush::Sealed>,
    ) -> Result<Outgoing, Failed> {
        match self {
            Channel::Ntfy(c) => Ok(c.request(event, q)),
            Channel::Webhook(c) => Ok(c.request(event, q, now)),
            Channel::WebPush(sub) => match push {
                Some(sealed) => Ok(webpush::request(sub, q, sealed)),
                None => Err("Web Push is not configured: VAPID_PRIVATE_KEY is not set".into()),
            },
        }
    }
}

/// Sends one request; `Ok(status)` for any HTTP answer, `Err` when none came
/// within `timeout` (the attempt then counts as failed).
pub async fn send(out: &Outgoing, timeout: Duration) -> Result<u16, Failed> {
    let headers = Headers::new();
    for (name, value) in &out.headers {
        // The error would quote the value, which may be a token: name only the header.
        headers
            .set(name, value)
            .map_err(|_| format!("header {name} has a value that HTTP does not allow"))?;
    }
    let method = match out.method {
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        _ => Method::Post,
    };
    let mut init = RequestInit::new();
    // A redirect is an answer, not a new address: the Worker talks only to the
    // URL it was given (an https push endpoint may not send it on to http, or
    // anywhere else). A 3xx is a failed attempt like any other.
    init.with_method(method)
        .with_headers(headers)
        .with_redirect(RequestRedirect::Manual);
    if let Some(body) = &out.body {
        init.with_body(Some(
            worker::js_sys::Uint8Array::from(body.as_slice()).into(),
        ));
    }
    let req = Request::new_with_init(&out.url, &init).map_err(|e| format!("bad request: {e}"))?;
    // A channel that never answers must not hold the alarm: abort it. Aborting
    // a request that already finished does nothing.
    let controller = AbortController::default();
    let signal = controller.signal();
    wasm_bindgen_futures::spawn_local(async move {
        Delay::from(timeout).await;
        controller.abort();
    });
    let resp = Fetch::Request(req)
        .send_with_signal(&signal)
        .await
        .map_err(|e| format!("no answer: {e}"))?;
    Ok(resp.status_code())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_that_could_never_work_are_refused() {
        let cfg = |v: serde_json::Value| v.as_object().unwrap().clone();
        let refused = [
            ("ntfy", json!({"url": "https://u:p@ntfy.sh/topic"})),
            (
                "ntfy",
                json!({"url": "https://ntfy.sh/topic", "token": "tk\r\nX: y"}),
            ),
            (
                "ntfy",
                json!({"url": "https://ntfy.sh/topic", "click": "javascript:alert(1)"}),
            ),
            (
                "webhook",
                json!({"url": "https://u:p@example.com/h", "secret": "0123456789abcdef"}),
            ),
            (
                "webhook",
                json!({"url": "::", "secret": "0123456789abcdef"}),
            ),
        ];
        for (kind, c) in refused {
            assert!(
                Channel::from_config(api::ChannelKind::parse(kind).unwrap(), &cfg(c.clone()))
                    .is_err(),
                "{kind} {c}"
            );
        }
        let ok = Channel::from_config(
            api::ChannelKind::Ntfy,
            &cfg(json!({"url": "https://ntfy.sh/topic", "token": "tk_1"})),
        );
        assert!(ok.is_ok());
    }
}
