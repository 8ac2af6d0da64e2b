//! Claude Code's hook events (the user-level `settings.json` hooks): which
//! ones we install, and what each means.

use serde_json::Value;

use super::{
    close, command_with_description, dialog, hook, ignore, is_subagent, round_end, str_field,
    Decision, HookSpec,
};
use crate::report::{CloseReason, Kind};

const ASK_TOOL: &str = "AskUserQuestion";

/// What `report-prompt install --cli claude-code` adds, in this order.
pub const HOOKS: &[HookSpec] = &[
    // The question dialog is about to open; its questions are in `tool_input`.
    hook("PreToolUse", Some(ASK_TOOL), false),
    // A permission dialog opened: what it asks, kept until it is confirmed.
    hook("PermissionRequest", None, false),
    // A permission dialog has been open for about six seconds.
    hook("Notification", Some("permission_prompt"), false),
    // A round ended: a question if the reply ends with one, else a close.
    hook("Stop", None, false),
    // The person typed, a tool ran or failed, the CLI quit: closes only.
    hook("UserPromptSubmit", None, true),
    hook("PostToolUse", None, true),
    hook("PostToolUseFailure", None, true),
    hook("SessionEnd", None, true),
];

pub(super) fn classify(event: &Value) -> Decision {
    if is_subagent(event) {
        return ignore("a subagent's event (agent_id is set)");
    }
    let tool = str_field(event, "tool_name");
    match str_field(event, "hook_event_name").unwrap_or("") {
        "PreToolUse" if tool == Some(ASK_TOOL) => dialog(
            event.get("tool_input").and_then(|i| i.get("questions")),
            "Claude Code is asking a question",
        ),
        "PreToolUse" => ignore("PreToolUse of a tool other than AskUserQuestion"),
        "Notification" => match str_field(event, "notification_type") {
            Some("permission_prompt") => Decision::Open {
                kind: Kind::Permission,
                text: str_field(event, "message")
                    .filter(|m| !m.is_empty())
                    .unwrap_or("Claude Code needs your permission")
                    .to_owned(),
                options: Vec::new(),
            },
            // idle_prompt comes about a minute after any reply nobody answered:
            // treating it as a question would ring after nearly every round.
            Some(other) => ignore(format!("notification type {other} is not a question")),
            None => ignore("notification without notification_type"),
        },
        // Fires 0.2 s after PreToolUse, for every tool that asks (Bash, Edit,
        // AskUserQuestion alike); the permission_prompt six seconds later says
        // the dialog is still up, and only then is it worth a report.
        "PermissionRequest" => Decision::Expect {
            kind: Kind::Permission,
            text: permission_text(tool.unwrap_or("a tool"), event.get("tool_input")),
        },
        "Stop" => round_end(str_field(event, "last_assistant_message")),
        "UserPromptSubmit" => close(CloseReason::PromptSubmitted),
        "PostToolUse" | "PostToolUseFailure" if tool == Some(ASK_TOOL) => {
            close(CloseReason::Answered)
        }
        "PostToolUse" | "PostToolUseFailure" => close(CloseReason::ToolRan),
        "SessionEnd" => close(CloseReason::SessionEnd),
        "SubagentStop" => ignore("SubagentStop: a subagent's round, not the person's"),
        "" => ignore("no hook_event_name"),
        other => ignore(format!("{other} is not a question event")),
    }
}

/// What a permission dialog asks: the command and why (Bash), the file
/// (Edit, Write, Read), else the tool's name.
fn permission_text(tool: &str, input: Option<&Value>) -> String {
    let field = |name: &str| input.and_then(|i| str_field(i, name));
    command_with_description(field("command"), field("description"))
        .or_else(|| field("command").map(|c| format!("Claude Code wants to run: {c}")))
        .or_else(|| field("file_path").map(|f| format!("Claude Code wants to use {tool} on {f}")))
        .or_else(|| field("url").map(|u| format!("Claude Code wants to use {tool} on {u}")))
        .unwrap_or_else(|| format!("Claude Code needs your permission to use {tool}"))
}

/// Whether a line that Claude Code appended to a session's transcript means
/// that an open dialog is gone. A denied permission and a question dismissed
/// with Esc fire no hook at all, but each leaves a `user` entry saying
/// "[Request interrupted by user for tool use]" (after the tool's rejected
/// result). Nothing else counts: Claude Code writes its transcript with some
/// delay, so the entry of the prompt that led to the dialog, or the result of
/// the tool before it, can still arrive after the dialog opened.
pub fn transcript_line_ends_dialog(line: &str) -> bool {
    let Ok(entry) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    if str_field(&entry, "type") != Some("user") || is_subagent_entry(&entry) {
        return false;
    }
    let content = entry.get("message").and_then(|m| m.get("content"));
    content.and_then(Value::as_array).is_some_and(|items| {
        items.iter().any(|i| {
            str_field(i, "type") == Some("text")
                && str_field(i, "text")
                    .is_some_and(|t| t.starts_with("[Request interrupted by user"))
        })
    })
}

/// A subagent's entries are marked as sidechain ones.
fn is_subagent_entry(entry: &Value) -> bool {
    entry.get("isSidechain").and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use crate::classify::{classify as run, Decision};
    use crate::report::{Cli, CloseReason, Kind, QuestionOption};
    use serde_json::{json, Value};

    fn base(event: &str) -> Value {
        json!({"session_id": "6f1c2a", "transcript_path": "/home/u/.claude/projects/p/6f1c2a.jsonl",
               "cwd": "/home/u/p", "permission_mode": "default", "hook_event_name": event})
    }

    fn with(event: &str, extra: Value) -> Value {
        let mut v = base(event);
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    }

    fn decide(v: &Value) -> Decision {
        let c = run(Cli::ClaudeCode, v);
        assert_eq!(c.session.as_deref(), Some("6f1c2a"));
        c.decision
    }

    fn reason(v: &Value) -> CloseReason {
        match decide(v) {
            Decision::Close { reason } => reason,
            d => panic!("not a close: {d:?}"),
        }
    }

    #[test]
    fn ask_user_question_opens_a_dialog_with_options() {
        let v = with(
            "PreToolUse",
            json!({"tool_name": "AskUserQuestion", "tool_use_id": "toolu_01",
            "tool_input": {"questions": [{"question": "Which auth strategy should I implement?",
              "header": "Auth", "multiSelect": false,
              "options": [{"label": "OAuth (GitHub)", "description": "Sign in with GitHub"},
                          {"label": "Email + password", "description": ""}]}]}}),
        );
        assert_eq!(
            decide(&v),
            Decision::Open {
                kind: Kind::Dialog,
                text: "Which auth strategy should I implement?".into(),
                options: vec![
                    QuestionOption {
                        label: "OAuth (GitHub)".into(),
                        description: Some("Sign in with GitHub".into())
                    },
                    QuestionOption {
                        label: "Email + password".into(),
                        description: None
                    },
                ],
            }
        );
    }

    #[test]
    fn permission_request_is_expected_with_what_it_asks() {
        let bash = with(
            "PermissionRequest",
            json!({"tool_name": "Bash", "tool_use_id": "toolu_1",
                "tool_input": {"command": "rm -rf build", "description": "Remove the build folder"}}),
        );
        assert_eq!(
            decide(&bash),
            Decision::Expect {
                kind: Kind::Permission,
                text: "Remove the build folder\n$ rm -rf build".into()
            }
        );
        let edit = with(
            "PermissionRequest",
            json!({"tool_name": "Edit", "tool_input": {"file_path": "/w/src/main.rs"}}),
        );
        assert_eq!(
            decide(&edit),
            Decision::Expect {
                kind: Kind::Permission,
                text: "Claude Code wants to use Edit on /w/src/main.rs".into()
            }
        );
    }

    #[test]
    fn transcript_entries_that_end_a_dialog() {
        use super::transcript_line_ends_dialog as ends;
        // As Claude Code 2.1.332 wrote them after Esc on a Bash permission.
        let rejected = r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"The user doesn't want to proceed with this tool use.","is_error":true,"tool_use_id":"toolu_1"}]},"timestamp":"2026-11-30T08:33:09.099Z"}"#;
        let interrupted = r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}"#;
        assert!(ends(interrupted));
        // Written late, these may follow the dialog's open: they say nothing of it.
        let typed = r#"{"type":"user","message":{"role":"user","content":"deploy"}}"#;
        assert!(!ends(rejected) && !ends(typed));
        let assistant =
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1"}]}}"#;
        let sidechain =
            r#"{"type":"user","isSidechain":true,"message":{"content":[{"type":"tool_result"}]}}"#;
        let attachment = r#"{"type":"attachment","attachment":{}}"#;
        let own_text =
            r#"{"type":"user","message":{"content":[{"type":"text","text":"<system-reminder>"}]}}"#;
        for line in [assistant, sidechain, attachment, own_text, "not json", ""] {
            assert!(!ends(line), "{line}");
        }
    }

    #[test]
    fn other_pre_tool_use_is_ignored() {
        let v = with(
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}),
        );
        assert!(matches!(decide(&v), Decision::Ignore { .. }));
    }

    #[test]
    fn permission_prompt_opens_a_permission() {
        let v = with(
            "Notification",
            json!({"message": "Claude needs your permission to use Bash",
            "notification_type": "permission_prompt"}),
        );
        assert_eq!(
            decide(&v),
            Decision::Open {
                kind: Kind::Permission,
                text: "Claude needs your permission to use Bash".into(),
                options: vec![]
            }
        );
    }

    #[test]
    fn other_notifications_never_open() {
        for t in [
            "idle_prompt",
            "auth_success",
            "elicitation_dialog",
            "something_new",
        ] {
            let v = with(
                "Notification",
                json!({"message": "Claude is waiting for your input", "notification_type": t}),
            );
            assert!(matches!(decide(&v), Decision::Ignore { .. }), "{t}");
        }
        let v = with("Notification", json!({"message": "hi"}));
        assert!(matches!(decide(&v), Decision::Ignore { .. }));
    }

    #[test]
    fn stop_with_a_question_opens_a_reply() {
        let v = with(
            "Stop",
            json!({"stop_hook_active": false,
            "last_assistant_message": "I found two options.\n\n**Should I delete the cache?**"}),
        );
        assert_eq!(
            decide(&v),
            Decision::Open {
                kind: Kind::Reply,
                text: "I found two options.\n\n**Should I delete the cache?**".into(),
                options: vec![]
            }
        );
    }

    #[test]
    fn stop_without_a_question_ends_the_round() {
        let v = with(
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": "All tests pass."}),
        );
        assert_eq!(reason(&v), CloseReason::RoundEnd);
        assert_eq!(reason(&base("Stop")), CloseReason::RoundEnd);
    }

    #[test]
    fn closing_events() {
        assert_eq!(
            reason(&with("UserPromptSubmit", json!({"prompt": "yes"}))),
            CloseReason::PromptSubmitted
        );
        assert_eq!(
            reason(&with(
                "PostToolUse",
                json!({"tool_name": "Bash", "tool_input": {}, "tool_response": {}})
            )),
            CloseReason::ToolRan
        );
        assert_eq!(
            reason(&with(
                "PostToolUseFailure",
                json!({"tool_name": "Bash", "error": "exit 1"})
            )),
            CloseReason::ToolRan
        );
        assert_eq!(
            reason(&with(
                "PostToolUse",
                json!({"tool_name": "AskUserQuestion", "tool_response": {}})
            )),
            CloseReason::Answered
        );
        assert_eq!(
            reason(&with("SessionEnd", json!({"reason": "prompt_input_exit"}))),
            CloseReason::SessionEnd
        );
    }

    #[test]
    fn subagents_are_ignored() {
        let v = with(
            "PreToolUse",
            json!({"agent_id": "a1", "agent_type": "Explore", "tool_name": "AskUserQuestion",
            "tool_input": {"questions": [{"question": "Q?"}]}}),
        );
        assert!(matches!(decide(&v), Decision::Ignore { .. }));
        let v = with(
            "Stop",
            json!({"agent_id": "a1", "last_assistant_message": "Q?"}),
        );
        assert!(matches!(decide(&v), Decision::Ignore { .. }));
        let v = with("SubagentStop", json!({"last_assistant_message": "Q?"}));
        assert!(matches!(decide(&v), Decision::Ignore { .. }));
    }

    #[test]
    fn unknown_events_are_ignored() {
        assert!(matches!(
            decide(&base("PreCompact")),
            Decision::Ignore { .. }
        ));
        let c = run(Cli::ClaudeCode, &json!({"session_id": "s"}));
        assert!(matches!(c.decision, Decision::Ignore { .. }));
    }
}
