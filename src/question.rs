//! The question, as the Worker reads it from D1 and shows it to everyone: the
//! "Needs you" list, the channels and the notifier's alarm all use this one
//! type. A statement that returns only a few columns has its own narrow type
//! ([`ClosedQuestion`]).

use serde::{Deserialize, Deserializer, Serialize};

use needs_you_core::{Cli, CloseReason, Kind, QuestionOption, Terminal};

/// One question with its task's name. Serialized, it is the list's and the
/// webhook's `question` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    #[serde(rename = "question_id")]
    pub id: String,
    pub task_id: String,
    pub task_name: String,
    pub session: String,
    pub cli: Cli,
    pub kind: Kind,
    pub text: String,
    #[serde(deserialize_with = "options_from_json")]
    pub options: Vec<QuestionOption>,
    pub opened_at: i64,
    pub notified_at: Option<i64>,
    pub closed_at: Option<i64>,
    pub close_reason: Option<CloseReason>,
    /// When its task stops being live; the alarm notifies no expired task.
    #[serde(default, skip_serializing)]
    pub task_expires_at: Option<i64>,
    /// Where its agent runs, as its reporter said (none from older reporters).
    #[serde(default, deserialize_with = "terminal_from_json")]
    pub terminal: Option<Terminal>,
    /// A reply whose terminal an answer can be typed into from afar.
    #[serde(default, deserialize_with = "crate::store::flag")]
    pub answerable: bool,
}

impl Question {
    /// A question just opened, with no options, terminal or notification yet,
    /// and no task or session behind it: the test push sends one, and tests
    /// start from one.
    pub fn open(
        id: &str,
        task_name: &str,
        cli: Cli,
        kind: Kind,
        text: &str,
        opened_at: i64,
    ) -> Self {
        Question {
            id: id.to_owned(),
            task_id: String::new(),
            task_name: task_name.to_owned(),
            session: String::new(),
            cli,
            kind,
            text: text.to_owned(),
            options: vec![],
            opened_at,
            notified_at: None,
            closed_at: None,
            close_reason: None,
            task_expires_at: None,
            terminal: None,
            answerable: false,
        }
    }

    /// Whether its task has expired at `now` (ms).
    pub fn task_expired(&self, now: f64) -> bool {
        self.task_expires_at.is_some_and(|t| t as f64 <= now)
    }
}

/// A question that a statement just closed: what the notifier needs to know
/// to disarm its alarm or tell the channels.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ClosedQuestion {
    pub id: String,
    pub kind: Kind,
    pub notified_at: Option<i64>,
}

/// `options` is stored as JSON text: parsed here, and nowhere else. A row
/// that somehow holds something else shows no options rather than failing
/// the whole list.
fn options_from_json<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<QuestionOption>, D::Error> {
    let text = String::deserialize(d)?;
    Ok(serde_json::from_str(&text).unwrap_or_default())
}

/// `terminal` is stored as JSON text, or null.
fn terminal_from_json<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Terminal>, D::Error> {
    let text = Option::<String>::deserialize(d)?;
    Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row() -> serde_json::Value {
        json!({"question_id": "q_1", "task_id": "tsk_1", "task_name": "deploy", "session": "s",
               "cli": "codex", "kind": "permission", "text": "Run it?",
               "options": "[{\"label\":\"yes\"},{\"label\":\"no\",\"description\":\"stop\"}]",
               "opened_at": 1000, "notified_at": null, "closed_at": null, "close_reason": null,
               "task_expires_at": 5000})
    }

    #[test]
    fn a_row_reads_into_the_question_and_serializes_without_its_task_expiry() {
        let q: Question = serde_json::from_value(row()).unwrap();
        assert_eq!((q.cli, q.kind), (Cli::Codex, Kind::Permission));
        assert_eq!(q.options.len(), 2);
        assert_eq!(q.options[1].description.as_deref(), Some("stop"));
        assert!(!q.task_expired(4999.0) && q.task_expired(5000.0));
        let out = serde_json::to_value(&q).unwrap();
        assert_eq!(out["question_id"], "q_1");
        assert_eq!(
            out["options"],
            json!([{"label": "yes"}, {"label": "no", "description": "stop"}])
        );
        assert!(out.get("task_expires_at").is_none());
    }

    #[test]
    fn bad_stored_options_show_as_none() {
        let mut r = row();
        r["options"] = json!("not json");
        let q: Question = serde_json::from_value(r).unwrap();
        assert!(q.options.is_empty());
    }

    #[test]
    fn a_closed_row_reads_its_reason() {
        let mut r = row();
        r["closed_at"] = json!(2000);
        r["close_reason"] = json!("superseded");
        let q: Question = serde_json::from_value(r).unwrap();
        assert_eq!(q.close_reason, Some(CloseReason::Superseded));
    }
}
