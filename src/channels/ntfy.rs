//! ntfy: publish to the owner's topic, and clear the notification when the
//! question closes.
//!
//! Publishing uses ntfy's JSON form (a POST to the server root with `topic` in
//! the body) so that titles in any script survive: HTTP header values must be
//! ASCII. The question id is the ntfy `sequence_id`, which lets the close
//! `PUT /<topic>/<sequence_id>/clear` dismiss that very notification (ntfy 2.16
//! and later; older servers answer 404 there, which is recorded as a failure).

use serde::Serialize;
use serde_json::{Map, Value};

use needs_you_core::words::option_lines;
use needs_you_core::{truncate_bytes, Kind};

use super::error::Refused;
use super::outgoing::{is_header_value, words_of, Outgoing};
use crate::delivery::Event;
use crate::question::Question;
use crate::urls::is_http_url;

/// ntfy's message limit, in bytes. A longer message is not shown: ntfy turns
/// it into an attachment (or refuses it where attachments are off), so the
/// notification would say "attachment.txt" instead of the question.
const MAX_MESSAGE_BYTES: usize = 4096;

/// ntfy's priority of a notification its owner is looking at: its lowest
/// ("min"), which makes no sound and no vibration.
const QUIET_PRIORITY: u8 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Ntfy {
    /// The topic URL, e.g. `https://ntfy.sh/my-secret-topic`.
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// 1 (min) to 5 (max); 4 (high) by default, since a blocked agent is urgent.
    pub priority: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub click: Option<String>,
    /// Whether a notification carries the question's words; without, only
    /// which CLI waits and what kind of question, in the words of every
    /// screen ([`needs_you_core::Cli::asking`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub words: bool,
}

impl Ntfy {
    pub fn from_config(c: &Map<String, Value>) -> Result<Ntfy, Refused> {
        let url = match c.get("url") {
            Some(Value::String(u)) => u.trim().trim_end_matches('/').to_owned(),
            _ => return Err("`url` must be the topic URL, e.g. https://ntfy.sh/my-topic".into()),
        };
        split_topic(&url)?;
        let token = optional_str(c, "token")?;
        if token.as_deref().is_some_and(|t| !is_header_value(t)) {
            return Err("`token` must be printable ASCII without line breaks".into());
        }
        let click = optional_str(c, "click")?;
        if click.as_deref().is_some_and(|u| !is_http_url(u)) {
            return Err("`click` must be an http(s) URL".into());
        }
        let priority = match c.get("priority") {
            None | Some(Value::Null) => 4,
            Some(v) => match v.as_u64() {
                Some(p @ 1..=5) => p as u8,
                _ => return Err("`priority` must be a whole number from 1 to 5".into()),
            },
        };
        Ok(Ntfy {
            url,
            token,
            priority,
            click,
            words: words_of(c)?,
        })
    }

    pub fn request(&self, event: Event, q: &Question) -> Outgoing {
        let (base, topic) = split_topic(&self.url).expect("validated when stored");
        let mut headers = vec![("content-type", "application/json".to_owned())];
        if let Some(t) = &self.token {
            headers.push(("authorization", format!("Bearer {t}")));
        }
        match event {
            Event::Open => {
                let tag = match q.kind {
                    Kind::Permission => "lock",
                    Kind::Dialog | Kind::Reply => "question",
                };
                // Sealed words are not the server's to carry.
                let (title, message) = if self.words && !q.sealed {
                    (words_title(q), words_message(q))
                } else {
                    (q.cli.asking(q.kind), WORDLESS_MESSAGE.to_owned())
                };
                let mut body = serde_json::json!({
                    "topic": topic, "title": title, "message": message, "priority": if q.quiet { QUIET_PRIORITY } else { self.priority },
                    "tags": [tag, q.cli.as_str()], "sequence_id": q.question_id,
                });
                if let Some(click) = &self.click {
                    body["click"] = Value::String(click.clone());
                    // A question the page can answer gets a button to its
                    // card. Only a link: a button that acted would carry a
                    // device credential through the ntfy server.
                    if q.answer_from_afar.is_some() {
                        let card = format!(
                            "{}/#question-{}",
                            click.trim_end_matches('/'),
                            q.question_id
                        );
                        body["actions"] = serde_json::json!([
                            {"action": "view", "label": "Answer on the page", "url": card, "clear": false}
                        ]);
                    }
                }
                Outgoing {
                    method: "POST",
                    url: format!("{base}/"),
                    headers,
                    body: Some(body.to_string().into_bytes()),
                }
            }
            Event::Close => Outgoing {
                method: "PUT",
                url: format!("{base}/{topic}/{}/clear", q.question_id),
                headers,
                body: None,
            },
        }
    }
}

/// A notification's message when the channel carries no words.
const WORDLESS_MESSAGE: &str = "Open needs-you to see it.";

/// The title of a channel with words: the task's name, or its agent's when
/// that name is sealed.
fn words_title(q: &Question) -> String {
    if q.task_sealed_name.is_some() {
        return q.cli.asking(q.kind);
    }
    match q.kind {
        Kind::Permission => format!("{} needs your permission", q.task_name),
        Kind::Dialog | Kind::Reply => format!("{} is asking", q.task_name),
    }
}

/// The message of a channel with words: the question and its options, cut
/// to what ntfy shows.
fn words_message(q: &Question) -> String {
    let options = option_lines(&q.options);
    let message = if options.is_empty() {
        q.text.clone()
    } else {
        format!("{}\n{options}", q.text)
    };
    truncate_bytes(&message, MAX_MESSAGE_BYTES)
}

fn optional_str(c: &Map<String, Value>, field: &str) -> Result<Option<String>, Refused> {
    match c.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        _ => Err(format!("`{field}` must be a non-empty string").into()),
    }
}

/// Splits a topic URL into the server base and the topic name.
fn split_topic(url: &str) -> Result<(&str, &str), Refused> {
    let bad = || {
        Refused::from(
            "`url` must be an http(s) topic URL without a user or password, e.g. https://ntfy.sh/my-topic",
        )
    };
    if !is_http_url(url) {
        return Err(bad());
    }
    let scheme_end = url.find("://").map_or(0, |i| i + 3);
    let slash = url.rfind('/').filter(|&i| i > scheme_end).ok_or_else(bad)?;
    let topic = &url[slash + 1..];
    let topic_ok = !topic.is_empty()
        && topic.len() <= 64
        && topic
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !topic_ok {
        return Err(
            "the topic (the URL's last part) must be 1 to 64 letters, digits, - or _".into(),
        );
    }
    Ok((&url[..slash], topic))
}

#[cfg(test)]
mod tests {
    use super::*;
    use needs_you_core::{Cli, QuestionOption};
    use serde_json::{json, Value};

    #[test]
    fn a_long_question_is_cut_to_what_ntfy_shows() {
        let c = json!({"url": "https://ntfy.sh/topic", "words": true});
        let ntfy = Ntfy::from_config(c.as_object().unwrap()).unwrap();
        let mut q = Question::open(
            "q_1",
            "deploy",
            Cli::Codex,
            Kind::Reply,
            &"\u{1F680}".repeat(4000),
            0,
        );
        q.options = vec![QuestionOption {
            label: "yes".into(),
            description: None,
        }];
        let body: Value =
            serde_json::from_slice(&ntfy.request(Event::Open, &q).body.unwrap()).unwrap();
        let message = body["message"].as_str().unwrap();
        assert!(message.len() <= MAX_MESSAGE_BYTES, "{}", message.len());
        assert!(message.starts_with("\u{1F680}\u{1F680}") && message.ends_with('…'));
    }

    #[test]
    fn without_words_a_notification_says_only_which_cli_waits_and_for_what() {
        let ntfy = |c: Value| Ntfy::from_config(c.as_object().unwrap()).unwrap();
        let q = Question::open(
            "q_1",
            "secret-task",
            Cli::Codex,
            Kind::Permission,
            "Run deploy --token hunter2?",
            0,
        );
        let body: Value = serde_json::from_slice(
            &ntfy(json!({"url": "https://ntfy.sh/topic"}))
                .request(Event::Open, &q)
                .body
                .unwrap(),
        )
        .unwrap();
        assert_eq!(body["title"], "Codex needs your permission");
        assert_eq!(body["message"], WORDLESS_MESSAGE);
        let sent = body.to_string();
        assert!(
            !sent.contains("hunter2") && !sent.contains("secret-task"),
            "{sent}"
        );
        let worded: Value = serde_json::from_slice(
            &ntfy(json!({"url": "https://ntfy.sh/topic", "words": true}))
                .request(Event::Open, &q)
                .body
                .unwrap(),
        )
        .unwrap();
        assert_eq!(worded["title"], "secret-task needs your permission");
        assert_eq!(worded["message"], "Run deploy --token hunter2?");
        assert!(Ntfy::from_config(
            json!({"url": "https://ntfy.sh/t", "words": "yes"})
                .as_object()
                .unwrap()
        )
        .is_err());
    }

    #[test]
    fn a_question_the_page_can_answer_gets_a_link_to_its_card_and_nothing_that_acts() {
        let c = json!({"url": "https://ntfy.sh/topic", "click": "https://needs-you.example.workers.dev/"});
        let ntfy = Ntfy::from_config(c.as_object().unwrap()).unwrap();
        let mut q = Question::open(
            "q_1",
            "deploy",
            Cli::ClaudeCode,
            Kind::Permission,
            "Run make?",
            0,
        );
        let body = |q: &Question| -> Value {
            serde_json::from_slice(&ntfy.request(Event::Open, q).body.unwrap()).unwrap()
        };
        assert_eq!(
            body(&q)["actions"],
            Value::Null,
            "it takes nothing from afar"
        );
        q.digest = Some("ab".repeat(32));
        q.settle_afar(Some(needs_you_core::afar::Afar::Decision));
        assert_eq!(
            body(&q)["actions"],
            json!([{"action": "view", "label": "Answer on the page",
                    "url": "https://needs-you.example.workers.dev/#question-q_1", "clear": false}])
        );
    }
}
