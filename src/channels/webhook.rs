//! Webhook: POST a JSON event, signed so the receiver can verify it came from us.
//!
//! `X-Needs-You-Signature: sha256=<hex>` is HMAC-SHA256 of the exact body bytes
//! under the channel's secret. The body carries `sent_at`, so a receiver can
//! refuse old replays.

use hmac::{Hmac, Mac};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::Sha256;

use super::error::Refused;
use super::outgoing::{words_of, Outgoing};
use crate::delivery::Event;
use crate::ids::hex;
use crate::question::Question;
use crate::urls::is_http_url;

/// Shortest secret accepted: anything shorter is guessable.
pub const MIN_SECRET_CHARS: usize = 16;

#[derive(Debug, Clone, Serialize)]
pub struct Webhook {
    pub url: String,
    pub secret: String,
    /// Whether an event carries the whole question, words included; without,
    /// only [`WORDLESS_FIELDS`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub words: bool,
}

/// What an event without words says of its question: ids, which CLI, what
/// kind, its times and states. Listed rather than left out, so that a field
/// added to the question later carries no words by mistake.
pub const WORDLESS_FIELDS: &[&str] = &[
    "question_id",
    "task_id",
    "cli",
    "kind",
    "opened_at",
    "notified_at",
    "closed_at",
    "close_reason",
    "answer_from_afar",
    "open_seq",
];

impl Webhook {
    pub fn from_config(c: &Map<String, Value>) -> Result<Webhook, Refused> {
        let url = match c.get("url") {
            Some(Value::String(u)) if is_http_url(u.trim()) => u.trim().to_owned(),
            _ => return Err("`url` must be an http(s) URL without a user or password".into()),
        };
        let secret = match c.get("secret") {
            Some(Value::String(s)) if s.chars().count() >= MIN_SECRET_CHARS => s.clone(),
            _ => {
                return Err(format!(
                    "`secret` must be a string of at least {MIN_SECRET_CHARS} characters"
                )
                .into())
            }
        };
        Ok(Webhook {
            url,
            secret,
            words: words_of(c)?,
        })
    }

    pub fn request(&self, event: Event, q: &Question, now: f64) -> Outgoing {
        let name = match event {
            Event::Open => "question.open",
            Event::Close => "question.closed",
        };
        // `quiet`: someone of the owner is looking at the page; a receiver
        // that rings may ring softly.
        let mut question = serde_json::to_value(&q.shown).unwrap_or_default();
        if let (false, Some(fields)) = (self.words, question.as_object_mut()) {
            fields.retain(|k, _| WORDLESS_FIELDS.contains(&k.as_str()));
        }
        let body = serde_json::json!({"event": name, "sent_at": now as i64, "quiet": q.quiet,
            "words": self.words, "question": question})
        .to_string();
        Outgoing {
            method: "POST",
            url: self.url.clone(),
            headers: vec![
                ("content-type", "application/json".to_owned()),
                ("x-needs-you-event", name.to_owned()),
                (
                    "x-needs-you-signature",
                    format!("sha256={}", sign(&self.secret, body.as_bytes())),
                ),
            ],
            body: Some(body.into_bytes()),
        }
    }
}

/// HMAC-SHA256 of `body` under `secret`, in lower-case hex.
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(body);
    hex(&mac.finalize().into_bytes())
}
