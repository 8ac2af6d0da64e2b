//! The normalized event that our OpenCode and Hermes plugins write on the
//! reporter's stdin.
//!
//! Those CLIs load plugins instead of running shell hooks. The plugin maps the
//! CLI's own events onto four events and leaves every rule that the design shares
//! between CLIs (the question test, the reply tail, option limits) to this crate.
//! Version 1, one JSON object:
//!
//! | `event`      | other fields                                   | means                       |
//! | ------------ | ---------------------------------------------- | --------------------------- |
//! | `dialog`     | `questions`: `[{question, header?, options?: [{label, description?}]}]` | a question dialog opened |
//! | `permission` | `text`: what is being asked                    | an approval dialog opened   |
//! | `turn_end`   | `text`: the agent's last reply                 | a reply ended: a question opens, anything else closes (`round_end`) |
//! | `close`      | `reason`: one of the report's close reasons    | the person answered         |
//!
//! Every event also has `session` (the CLI's session id) and may have `v` (1).

use serde_json::Value;

use super::{close, dialog, ignore, round_end, str_field, Decision};
use crate::report::{CloseReason, Kind};

/// The version of the normalized format that this crate reads.
pub const VERSION: u64 = 1;

pub(super) fn classify(event: &Value) -> Decision {
    if let Some(v) = event.get("v").and_then(Value::as_u64) {
        if v > VERSION {
            return ignore(format!(
                "normalized event version {v} is newer than {VERSION}"
            ));
        }
    }
    match str_field(event, "event").unwrap_or("") {
        "dialog" => dialog(event.get("questions"), "The agent is asking a question"),
        "permission" => Decision::Open {
            kind: Kind::Permission,
            text: str_field(event, "text")
                .filter(|t| !t.is_empty())
                .unwrap_or("The agent needs your permission")
                .to_owned(),
            options: Vec::new(),
        },
        "turn_end" => round_end(str_field(event, "text")),
        "close" => match str_field(event, "reason") {
            None => close(CloseReason::Answered),
            Some(r) => match CloseReason::parse(r) {
                Some(reason) => close(reason),
                None => ignore(format!("unknown close reason {r:?}")),
            },
        },
        "" => ignore("no `event` field"),
        other => ignore(format!("unknown normalized event {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use crate::classify::{classify as run, Decision};
    use crate::report::{Cli, CloseReason, Kind, QuestionOption};
    use serde_json::json;

    fn decide(v: serde_json::Value) -> Decision {
        let c = run(Cli::Opencode, &v);
        assert_eq!(c.session.as_deref(), Some("ses_1"));
        c.decision
    }

    #[test]
    fn dialog_with_questions() {
        let d = decide(json!({"v": 1, "session": "ses_1", "event": "dialog",
            "questions": [{"question": "Pick a DB?", "header": "DB",
                           "options": [{"label": "SQLite", "description": "file"}, {"label": "Postgres"}]}]}));
        assert_eq!(
            d,
            Decision::Open {
                kind: Kind::Dialog,
                text: "Pick a DB?".into(),
                options: vec![
                    QuestionOption {
                        label: "SQLite".into(),
                        description: Some("file".into())
                    },
                    QuestionOption {
                        label: "Postgres".into(),
                        description: None
                    },
                ]
            }
        );
    }

    #[test]
    fn hermes_choices_as_strings() {
        let c = run(
            Cli::Hermes,
            &json!({"session": "ses_1", "event": "dialog",
            "questions": [{"question": "Which?", "choices": ["a", "b"]}]}),
        );
        let Decision::Open { options, .. } = c.decision else {
            panic!()
        };
        assert_eq!(
            options.iter().map(|o| o.label.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
    }

    #[test]
    fn permission_and_turn_end() {
        assert_eq!(
            decide(json!({"session": "ses_1", "event": "permission", "text": "Run `npm test`"})),
            Decision::Open {
                kind: Kind::Permission,
                text: "Run `npm test`".into(),
                options: vec![]
            }
        );
        assert!(matches!(
            decide(json!({"session": "ses_1", "event": "turn_end", "text": "Merge it？"})),
            Decision::Open {
                kind: Kind::Reply,
                ..
            }
        ));
        assert_eq!(
            decide(json!({"session": "ses_1", "event": "turn_end", "text": "Merged."})),
            Decision::Close {
                reason: CloseReason::RoundEnd
            }
        );
    }

    #[test]
    fn close_with_and_without_reason() {
        assert_eq!(
            decide(json!({"session": "ses_1", "event": "close", "reason": "interrupted"})),
            Decision::Close {
                reason: CloseReason::Interrupted
            }
        );
        assert_eq!(
            decide(json!({"session": "ses_1", "event": "close"})),
            Decision::Close {
                reason: CloseReason::Answered
            }
        );
        assert!(matches!(
            decide(json!({"session": "ses_1", "event": "close", "reason": "meh"})),
            Decision::Ignore { .. }
        ));
    }

    #[test]
    fn unknown_and_newer_events_are_ignored() {
        assert!(matches!(
            decide(json!({"session": "ses_1", "event": "idle"})),
            Decision::Ignore { .. }
        ));
        assert!(matches!(
            decide(json!({"session": "ses_1"})),
            Decision::Ignore { .. }
        ));
        assert!(matches!(
            decide(json!({"v": 2, "session": "ses_1", "event": "close"})),
            Decision::Ignore { .. }
        ));
    }
}
