//! The question, as the Worker reads it from D1 and shows it to everyone: the
//! "Needs you" list, the channels and the notifier's alarm all use this one
//! type. What it shows is `needs_you_core::api::Question`, the API's own
//! view, which the command line reads too; beside it, what only the Worker
//! needs (when its task expires). A statement that returns only a few
//! columns has its own narrow type ([`ClosedQuestion`]).

use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use needs_you_core::afar::Afar;
use needs_you_core::api;
use needs_you_core::lasting::Offer;
use needs_you_core::{Cli, CloseReason, Kind, Terminal};

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
    /// What a Web Push shows of a question whose words are sealed, sealed
    /// too, for the page's service worker to open.
    pub summary: Option<String>,
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
                task_sealed_name: None,
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
                open_seq: 0,
                screen: false,
                sealed: false,
                decisions: vec![],
            },
            task_expires_at: None,
            task_revoked: false,
            owner_id: String::new(),
            task_muted_until: None,
            quiet: false,
            summary: None,
        }
    }

    /// Whether its task has expired at `now` (ms).
    pub fn task_expired(&self, now: f64) -> bool {
        self.task_expires_at.is_some_and(|t| t as f64 <= now)
    }
}

/// A D1 row of `store::questions`' question statements
/// (`question_columns!` in `store/questions.rs`): every column named, none defaulted, so a
/// statement that leaves one out fails loudly rather than read as an empty
/// owner or an unmuted task. `options`, `terminal`, `questions` and
/// `decisions` are stored as JSON text, and the flags as 0 or 1.
#[derive(Deserialize)]
struct Row {
    question_id: String,
    task_id: String,
    task_name: String,
    #[serde(deserialize_with = "column")]
    task_sealed_name: Option<String>,
    session: String,
    cli: Cli,
    kind: Kind,
    text: String,
    #[serde(deserialize_with = "column")]
    options: Option<String>,
    opened_at: i64,
    #[serde(deserialize_with = "column")]
    notified_at: Option<i64>,
    #[serde(deserialize_with = "column")]
    quieted_by: Option<String>,
    #[serde(deserialize_with = "column")]
    closed_at: Option<i64>,
    #[serde(deserialize_with = "column")]
    close_reason: Option<CloseReason>,
    #[serde(deserialize_with = "column")]
    terminal: Option<String>,
    answerable: u8,
    #[serde(deserialize_with = "column")]
    takes: Option<String>,
    #[serde(deserialize_with = "column")]
    digest: Option<String>,
    open_seq: u64,
    #[serde(deserialize_with = "column")]
    questions: Option<String>,
    #[serde(deserialize_with = "column")]
    decisions: Option<String>,
    owner_id: String,
    #[serde(deserialize_with = "column")]
    task_expires_at: Option<i64>,
    #[serde(deserialize_with = "column")]
    task_revoked_at: Option<i64>,
    #[serde(deserialize_with = "column")]
    task_muted_until: Option<i64>,
    task_screen: u8,
    sealed: u8,
    #[serde(deserialize_with = "column")]
    summary: Option<String>,
}

/// A column that may hold NULL but must be there: serde reads a missing
/// `Option` field as `None` unless it has a deserializer of its own.
fn column<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(d)
}

/// JSON text as `T`; text that somehow does not parse reads as nothing
/// rather than fail the whole list.
fn json_text<T: serde::de::DeserializeOwned>(text: Option<String>) -> Option<T> {
    serde_json::from_str(text.as_deref()?).ok()
}

impl From<Row> for Question {
    fn from(row: Row) -> Question {
        let terminal: Option<Terminal> = json_text(row.terminal);
        // Only well-formed lasting choices: allow and deny are added by
        // `settle_afar`, for what takes a decision.
        let decisions: Vec<Offer> = json_text::<Vec<Value>>(row.decisions)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|o| serde_json::from_value::<Offer>(o).ok())
            .filter(|o| o.lasting)
            .collect();
        let screen = row.task_screen != 0
            && terminal
                .as_ref()
                .is_some_and(|t| t.kind == needs_you_core::TerminalKind::Tmux);
        let mut shown = api::Question {
            question_id: row.question_id,
            task_id: row.task_id,
            task_name: row.task_name,
            task_sealed_name: row.task_sealed_name,
            session: row.session,
            cli: row.cli,
            kind: row.kind,
            text: row.text,
            options: json_text(row.options).unwrap_or_default(),
            opened_at: row.opened_at,
            notified_at: row.notified_at,
            quieted_by: row.quieted_by,
            closed_at: row.closed_at,
            close_reason: row.close_reason,
            terminal,
            answerable: row.answerable != 0,
            answer_from_afar: None,
            why_not: None,
            questions: json_text(row.questions).unwrap_or_default(),
            digest: row.digest,
            open_seq: row.open_seq,
            screen,
            sealed: row.sealed != 0,
            decisions,
        };
        shown.settle_afar(row.takes.as_deref().and_then(Afar::parse));
        Question {
            shown,
            task_expires_at: row.task_expires_at,
            task_revoked: row.task_revoked_at.is_some(),
            owner_id: row.owner_id,
            task_muted_until: row.task_muted_until,
            quiet: false,
            summary: row.summary,
        }
    }
}

impl<'de> Deserialize<'de> for Question {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Row::deserialize(d).map(Question::from)
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
        json!({"question_id": "q_1", "task_id": "tsk_1", "task_name": "deploy", "task_sealed_name": null, "session": "s",
               "cli": "codex", "kind": "permission", "text": "Run it?",
               "options": "[{\"label\":\"yes\"},{\"label\":\"no\",\"description\":\"stop\"}]",
               "opened_at": 1000, "notified_at": null, "quieted_by": null, "closed_at": null,
               "close_reason": null, "terminal": null, "answerable": 0, "takes": null,
               "digest": null, "open_seq": 4, "questions": null, "decisions": null, "owner_id": "own_1",
               "task_expires_at": 5000, "task_revoked_at": null, "task_muted_until": null,
               "task_screen": 1, "sealed": 0, "summary": null})
    }

    #[test]
    fn a_row_without_a_column_is_refused_not_defaulted() {
        let q: Question = serde_json::from_value(row()).unwrap();
        assert_eq!(q.owner_id, "own_1");
        for column in [
            "owner_id",
            "task_muted_until",
            "task_sealed_name",
            "task_revoked_at",
            "digest",
            "open_seq",
        ] {
            let mut r = row();
            r.as_object_mut().unwrap().remove(column);
            let err = serde_json::from_value::<Question>(r).unwrap_err();
            assert!(err.to_string().contains(column), "{column}: {err}");
        }
    }

    #[test]
    fn a_tmux_row_of_a_task_that_allows_screens_shows_them() {
        let mut r = row();
        r["terminal"] = json!(r#"{"kind":"tmux","host":"box","cwd":"/w","target":"s:0.1"}"#);
        let q: Question = serde_json::from_value(r.clone()).unwrap();
        assert!(q.screen && q.terminal.is_some());
        r["task_screen"] = json!(0);
        let q: Question = serde_json::from_value(r).unwrap();
        assert!(!q.screen);
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
