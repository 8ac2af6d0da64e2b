//! The question, as the Worker reads it from D1 and shows it to everyone: the
//! "Needs you" list, the channels and the notifier's alarm all use this one
//! type. What it shows is `needs_you_core::api::Question`, the API's own
//! view, which the command line reads too; beside it, what only the Worker
//! needs (when its task expires). A statement that returns only a few
//! columns has its own narrow type ([`ClosedQuestion`]).

use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use needs_you_core::afar::Afar;
use needs_you_core::api;
use needs_you_core::{Cli, Kind};

/// One question with its task's name.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// What every screen and channel shows.
    pub shown: api::Question,
    /// When its task stops being live; the alarm notifies no expired task.
    pub task_expires_at: Option<i64>,
    /// Whether its task was revoked (read only by the statements that ask).
    pub task_revoked: bool,
    /// Its owner (likewise).
    pub owner_id: String,
    /// Until when its task is muted (ms): its alarm rings nobody before.
    pub task_muted_until: Option<i64>,
    /// Set by the alarm for one delivery: someone of its owner is looking at
    /// the page, so the notification makes no sound ([`crate::delivery::quiet`]).
    pub quiet: bool,
}

impl Deref for Question {
    type Target = api::Question;
    fn deref(&self) -> &api::Question {
        &self.shown
    }
}

impl DerefMut for Question {
    fn deref_mut(&mut self) -> &mut api::Question {
        &mut self.shown
    }
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
            shown: api::Question {
                question_id: id.to_owned(),
                task_id: String::new(),
                task_name: task_name.to_owned(),
                session: String::new(),
                cli,
                kind,
                text: text.to_owned(),
                options: vec![],
                opened_at,
                notified_at: None,
                quieted_by: None,
                closed_at: None,
                close_reason: None,
                terminal: None,
                answerable: false,
                answer_from_afar: None,
                why_not: None,
                questions: vec![],
                digest: None,
                screen: false,
                decisions: vec![],
            },
            task_expires_at: None,
            task_revoked: false,
            owner_id: String::new(),
            task_muted_until: None,
            quiet: false,
        }
    }

    /// Whether its task has expired at `now` (ms).
    pub fn task_expired(&self, now: f64) -> bool {
        self.task_expires_at.is_some_and(|t| t as f64 <= now)
    }
}

/// A D1 row of `store::questions`' question statements: the view's columns,
/// with `options` and `terminal` stored as JSON text and `answerable` as 0
/// or 1, and the task's expiry. Parsed here, and nowhere else. A row that
/// somehow holds bad options or a bad terminal shows none rather than
/// failing the whole list.
impl<'de> Deserialize<'de> for Question {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut row = Map::<String, Value>::deserialize(d)?;
        let json_text = |v: Option<Value>, default: Value| match v {
            Some(Value::String(t)) => serde_json::from_str(&t).unwrap_or(default),
            _ => default,
        };
        let options = json_text(row.remove("options"), Value::Array(vec![]));
        let options = match options {
            Value::Array(_) => options,
            _ => Value::Array(vec![]),
        };
        row.insert("options".into(), options);
        let terminal = json_text(row.remove("terminal"), Value::Null);
        let terminal = match serde_json::from_value::<needs_you_core::Terminal>(terminal) {
            Ok(t) => serde_json::to_value(t).unwrap_or(Value::Null),
            Err(_) => Value::Null,
        };
        row.insert("terminal".into(), terminal);
        let answerable = match row.remove("answerable") {
            Some(Value::Bool(b)) => b,
            Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0) != 0.0,
            _ => false,
        };
        row.insert("answerable".into(), Value::Bool(answerable));
        let task_expires_at = row
            .remove("task_expires_at")
            .and_then(|v| v.as_f64())
            .map(|t| t as i64);
        let task_revoked = row.remove("task_revoked_at").is_some_and(|v| !v.is_null());
        let owner_id = match row.remove("owner_id") {
            Some(Value::String(o)) => o,
            _ => String::new(),
        };
        let takes = match row.remove("takes") {
            Some(Value::String(t)) => Afar::parse(&t),
            _ => None,
        };
        let task_muted_until = row
            .remove("task_muted_until")
            .and_then(|v| v.as_f64())
            .map(|t| t as i64);
        let task_screen = match row.remove("task_screen") {
            Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0) != 0.0,
            _ => false,
        };
        let questions = json_text(row.remove("questions"), Value::Array(vec![]));
        row.insert("questions".into(), questions);
        // Only well-formed lasting choices: allow and deny are added by
        // `settle_afar`, for what takes a decision.
        let decisions = match json_text(row.remove("decisions"), Value::Null) {
            Value::Array(d) => d
                .into_iter()
                .filter(|o| {
                    serde_json::from_value::<needs_you_core::lasting::Offer>(o.clone())
                        .is_ok_and(|o| o.lasting)
                })
                .collect(),
            _ => vec![],
        };
        row.insert("decisions".into(), Value::Array(decisions));
        if !matches!(row.get("digest"), Some(Value::String(_))) {
            row.remove("digest");
        }
        let mut shown: api::Question =
            serde_json::from_value(Value::Object(row)).map_err(serde::de::Error::custom)?;
        shown.settle_afar(takes);
        shown.screen = task_screen
            && shown
                .terminal
                .as_ref()
                .is_some_and(|t| t.kind == needs_you_core::TerminalKind::Tmux);
        Ok(Question {
            shown,
            task_expires_at,
            task_revoked,
            owner_id,
            task_muted_until,
            quiet: false,
        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use needs_you_core::CloseReason;
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
        let out = serde_json::to_value(&*q).unwrap();
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
