//! Where an owner is notified, and how a delivery is sent.
//!
//! Each channel turns a question event into an [`Outgoing`] request with pure
//! code ([`ntfy`], [`webhook`]), so what goes on the wire is decided in one
//! place and tested without a network; [`send`] is the only I/O.

pub mod ntfy;
pub mod webhook;

use std::time::Duration;

use serde_json::{Map, Value};

use needs_you_core::QuestionOption;
use worker::{
    wasm_bindgen_futures, AbortController, Delay, Fetch, Headers, Method, Request, RequestInit,
};

use crate::delivery::Event;
use crate::question::Question;

/// A request to send, as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Option<String>,
}

/// The channel kinds `PUT /v1/channels/{kind}` accepts.
pub const KINDS: &[&str] = &["ntfy", "webhook"];

/// A channel's stored configuration, parsed.
pub enum Channel {
    Ntfy(ntfy::Ntfy),
    Webhook(webhook::Webhook),
}

impl Channel {
    /// Validates a configuration sent by an owner.
    pub fn from_config(kind: &str, config: &Map<String, Value>) -> Result<Channel, String> {
        match kind {
            "ntfy" => ntfy::Ntfy::from_config(config).map(Channel::Ntfy),
            "webhook" => webhook::Webhook::from_config(config).map(Channel::Webhook),
            other => Err(format!(
                "unknown channel kind {other:?}; use one of {}",
                KINDS.join(", ")
            )),
        }
    }

    /// Parses a configuration stored by [`Channel::stored`].
    pub fn from_stored(kind: &str, stored: &str) -> Result<Channel, String> {
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
        }
        .unwrap_or(Value::Null)
    }

    /// What an owner may read back: never a token or a secret.
    pub fn public(&self, kind: &str) -> Value {
        match self {
            Channel::Ntfy(c) => {
                serde_json::json!({"kind": kind, "url": c.url, "priority": c.priority,
                "click": c.click, "has_token": c.token.is_some()})
            }
            Channel::Webhook(c) => {
                serde_json::json!({"kind": kind, "url": c.url, "has_secret": true})
            }
        }
    }

    pub fn request(&self, event: Event, q: &Question, now: f64) -> Outgoing {
        match self {
            Channel::Ntfy(c) => c.request(event, q),
            Channel::Webhook(c) => c.request(event, q, now),
        }
    }
}

/// An `http://` or `https://` URL with a host: what every channel sends to.
pub fn is_http_url(u: &str) -> bool {
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/') && !r.contains(char::is_whitespace))
}

/// Option labels as a short list for a notification body.
pub fn option_lines(options: &[QuestionOption]) -> String {
    options
        .iter()
        .map(|o| format!("• {}", o.label))
        .collect::<Vec<_>>()
        .join("\n")
}

/// How long a channel gets to answer before the attempt counts as failed.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// Sends one request; `Ok(status)` for any HTTP answer, `Err` when none came
/// within [`SEND_TIMEOUT`].
pub async fn send(out: &Outgoing) -> Result<u16, String> {
    let headers = Headers::new();
    for (name, value) in &out.headers {
        headers
            .set(name, value)
            .map_err(|e| format!("bad header {name}: {e}"))?;
    }
    let method = match out.method {
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        _ => Method::Post,
    };
    let mut init = RequestInit::new();
    init.with_method(method).with_headers(headers);
    if let Some(body) = &out.body {
        init.with_body(Some(body.as_str().into()));
    }
    let req = Request::new_with_init(&out.url, &init).map_err(|e| format!("bad request: {e}"))?;
    // A channel that never answers must not hold the alarm: abort it. Aborting
    // a request that already finished does nothing.
    let controller = AbortController::default();
    let signal = controller.signal();
    wasm_bindgen_futures::spawn_local(async move {
        Delay::from(SEND_TIMEOUT).await;
        controller.abort();
    });
    let resp = Fetch::Request(req)
        .send_with_signal(&signal)
        .await
        .map_err(|e| format!("no answer: {e}"))?;
    Ok(resp.status_code())
}
