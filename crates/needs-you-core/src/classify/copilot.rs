//! GitHub Copilot CLI's hook events, in the shape it shares with Claude
//! Code (`~/.copilot/hooks/needs-you.json`, PascalCase event names; checked
//! with Copilot CLI 1.0.102): which ones we install, and what each means.
//!
//! Its permission dialog is told by `Notification` with `notification_type`
//! `permission_prompt`, fired only when a prompt is shown, with what it asks
//! in `message` ("Run command: …"); its `PermissionRequest` fires even when
//! a rule allows the tool, so it opens nothing. The model's question is its
//! `ask_user` tool (`AskUserQuestion` in these hooks, an MCP-style form in
//! `tool_input`). Nothing is taken from afar: no hook of its can answer a
//! dialog that is on screen.

use serde_json::Value;

use super::elicitation;
use super::event::{close, hook, ignore, str_field, Decision, HookSpec};
use crate::agent::{self, Description};
use crate::report::{CloseReason, Kind};

/// The tool the model asks the person with, as these hooks name it.
pub const ASK_TOOL: &str = "AskUserQuestion";

/// GitHub Copilot CLI, as the project knows it ([`crate::agent`]). Esc on
/// its dialogs fires no hook; its session's transcript says it, so every
/// dialog's is watched.
pub const DESCRIPTION: Description = Description {
    name: "Copilot",
    programs: &["copilot"],
    one_shot: |own| own.iter().any(|a| matches!(*a, "-p" | "--prompt")),
    hooks: HOOKS,
    hook_timeout_s: agent::HOOK_TIMEOUT_S,
    timeouts_in_ms: false,
    classify: |event| (classify(event), None),
    transcript_watched: |_| true,
    transcript_line_ends_dialog,
    reply_in_transcript: None,
    prompt_ready: None,
    hooks_lose_credential: false,
    plugin_root: None,
    why_not: |_| "Copilot takes its answer only in its terminal",
};

/// What `report-prompt install --cli copilot` adds, in this order.
pub const HOOKS: &[HookSpec] = &[
    // A permission dialog is shown, or the model's question form.
    hook("Notification", None, false),
    // The model asks the person: its question and choices are in `tool_input`.
    hook("PreToolUse", None, false),
    // The person typed, a tool ran or failed, a round ended, the CLI quit:
    // closes only. Its Stop carries no reply: a reply that asks is not heard.
    hook("UserPromptSubmit", None, true),
    hook("PostToolUse", None, true),
    hook("PostToolUseFailure", None, true),
    hook("Stop", None, true),
    hook("SessionEnd", None, true),
];

/// Whether a line of the session's transcript (`session-state/<session>/
/// events.jsonl` in Copilot's home) means its dialog is gone without a
/// hook: Esc (`abort`), or a permission that ended other than approved (an
/// approved one runs, and `PostToolUse` closes it).
pub fn transcript_line_ends_dialog(line: &str) -> bool {
    let Ok(entry) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    match str_field(&entry, "type") {
        Some("abort") => true,
        Some("permission.completed") => {
            entry.pointer("/data/result/kind").and_then(Value::as_str) != Some("approved")
        }
        _ => false,
    }
}

pub(super) fn classify(event: &Value) -> Decision {
    let tool = str_field(event, "tool_name");
    match str_field(event, "hook_event_name").unwrap_or("") {
        "Notification" => match str_field(event, "notification_type") {
            Some("permission_prompt") => Decision::Open {
                kind: Kind::Permission,
                text: str_field(event, "message")
                    .filter(|m| !m.trim().is_empty())
                    .unwrap_or("Copilot needs your permission")
                    .to_owned(),
                options: Vec::new(),
            },
            // Its `PreToolUse` said it first, with the question.
            Some("elicitation_dialog") => ignore("the question form: PreToolUse said it"),
            _ => ignore("a notification that is no dialog"),
        },
        "PreToolUse" if tool == Some(ASK_TOOL) => {
            let input = event.get("tool_input");
            let message = input.and_then(|i| str_field(i, "message")).unwrap_or("");
            let (text, options) =
                elicitation::form(message, None, input.and_then(|i| i.get("requestedSchema")));
            Decision::Open {
                kind: Kind::Dialog,
                text,
                options,
            }
        }
        "PreToolUse" => ignore("PreToolUse of a tool that asks nobody"),
        "PostToolUse" | "PostToolUseFailure" if tool == Some(ASK_TOOL) => {
            close(CloseReason::Answered)
        }
        "PostToolUse" | "PostToolUseFailure" => close(CloseReason::ToolRan),
        "UserPromptSubmit" => close(CloseReason::PromptSubmitted),
        "Stop" => close(CloseReason::RoundEnd),
        "SessionEnd" => close(CloseReason::SessionEnd),
        other => ignore(format!("{other} is not in Copilot's hook table")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::event::expect;
    use serde_json::json;

    fn opens(event: Value) -> (Kind, String, Vec<String>) {
        expect::opened(classify(&event))
    }

    #[test]
    fn a_permission_shown_opens_with_what_it_asks_and_a_tool_run_closes_it() {
        let shown = json!({"sessionId": "s", "hook_event_name": "Notification",
            "notification_type": "permission_prompt", "title": "Permission needed",
            "message": "Run command: rm -rf dist"});
        assert_eq!(
            opens(shown),
            (Kind::Permission, "Run command: rm -rf dist".into(), vec![])
        );
        let ran = json!({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash"});
        assert_eq!(
            classify(&ran),
            Decision::Close {
                reason: CloseReason::ToolRan
            }
        );
        let bash = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash"});
        assert!(matches!(classify(&bash), Decision::Ignore { .. }));
    }

    #[test]
    fn esc_or_a_refused_permission_in_the_transcript_ends_the_dialog_and_an_approval_does_not() {
        let ended = [
            r#"{"type":"abort","data":{"reason":"user_initiated"}}"#,
            r#"{"type":"permission.completed","data":{"result":{"kind":"cancelled","reason":"Session aborted"}}}"#,
            r#"{"type":"permission.completed","data":{"result":{"kind":"denied-interactively-by-user"}}}"#,
        ];
        for line in ended {
            assert!(transcript_line_ends_dialog(line), "{line}");
        }
        for line in [
            r#"{"type":"permission.completed","data":{"result":{"kind":"approved"}}}"#,
            r#"{"type":"permission.requested","data":{}}"#,
            "not json",
        ] {
            assert!(!transcript_line_ends_dialog(line), "{line}");
        }
    }

    #[test]
    fn the_model_s_question_opens_with_its_choices_and_its_answer_closes_it() {
        let asked = json!({"hook_event_name": "PreToolUse", "tool_name": ASK_TOOL,
            "tool_input": {"message": "Which colour?", "requestedSchema": {"properties": {
                "colour": {"type": "string", "title": "Colour", "enum": ["red", "blue"]}}}}});
        assert_eq!(
            opens(asked),
            (
                Kind::Dialog,
                "Which colour?".into(),
                vec!["red".into(), "blue".into()]
            )
        );
        let form =
            json!({"hook_event_name": "Notification", "notification_type": "elicitation_dialog"});
        assert!(matches!(classify(&form), Decision::Ignore { .. }));
        let answered = json!({"hook_event_name": "PostToolUse", "tool_name": ASK_TOOL});
        assert_eq!(
            classify(&answered),
            Decision::Close {
                reason: CloseReason::Answered
            }
        );
    }
}
