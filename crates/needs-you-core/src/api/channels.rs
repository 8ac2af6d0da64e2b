//! An owner's channels as the owner may read them back (never a token or
//! a secret), and what a test push did.

use serde::{Deserialize, Serialize};

wire_enum! {
    /// The channels an owner sets (`PUT /v1/channels/{kind}`); Web Push is a
    /// device's own, set by its page.
    ChannelKind { Ntfy = "ntfy", Webhook = "webhook" }
}

/// A channel as its owner may read it back: never a token or a secret.
/// `words`: whether it carries the question's words (its task's name, text
/// and options) to whoever runs that channel; without, only which CLI waits
/// and what kind of question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ChannelSettings {
    Ntfy {
        url: String,
        priority: u8,
        click: Option<String>,
        has_token: bool,
        #[serde(default)]
        words: bool,
    },
    Webhook {
        url: String,
        has_secret: bool,
        #[serde(default)]
        words: bool,
    },
}

impl ChannelSettings {
    pub fn url(&self) -> &str {
        match self {
            ChannelSettings::Ntfy { url, .. } | ChannelSettings::Webhook { url, .. } => url,
        }
    }

    pub fn words(&self) -> bool {
        match self {
            ChannelSettings::Ntfy { words, .. } | ChannelSettings::Webhook { words, .. } => *words,
        }
    }

    pub fn kind(&self) -> ChannelKind {
        match self {
            ChannelSettings::Ntfy { .. } => ChannelKind::Ntfy,
            ChannelSettings::Webhook { .. } => ChannelKind::Webhook,
        }
    }
}

/// A channel's last delivery that worked and the last that did not, with its
/// error: why a phone stopped ringing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelOutcome {
    pub last_success_at: Option<i64>,
    pub last_failure_at: Option<i64>,
    pub last_error: Option<String>,
}

/// A channel: its settings, and in `GET /v1/channels` its last outcomes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Channel {
    #[serde(flatten)]
    pub settings: ChannelSettings,
    #[serde(
        flatten,
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "outcome_if_any"
    )]
    pub outcome: Option<ChannelOutcome>,
}

/// A flattened outcome is "there" when any of its fields is, null or not.
fn outcome_if_any<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<ChannelOutcome>, D::Error> {
    use serde::de::Error;
    let rest = serde_json::Map::<String, serde_json::Value>::deserialize(d)?;
    let fields = ["last_success_at", "last_failure_at", "last_error"];
    if !fields.iter().any(|f| rest.contains_key(*f)) {
        return Ok(None);
    }
    serde_json::from_value(serde_json::Value::Object(rest))
        .map(Some)
        .map_err(D::Error::custom)
}

/// `GET /v1/channels`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Channels {
    pub channels: Vec<Channel>,
}

/// One channel's answer to `POST /v1/channels/test`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    /// `ntfy`, `webhook`, or `webpush:<device id>`.
    pub channel: String,
    /// For a person: the channel, or "browser: \<device name>".
    pub name: String,
    pub ok: bool,
    pub status: Option<u16>,
    pub error: Option<String>,
}

/// `POST /v1/channels/test`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResults {
    pub results: Vec<TestResult>,
}
