//! Codex's hook events (managed hooks in `/etc/codex/hooks.json`): which ones
//! we install, and what each means.

use serde_json::Value;

use super::event::{
    close, command_with_description, from_agent, hook, ignore, is_subagent, round_end, str_field,
    Decision, HookSpec,
};
use crate::agent::{self, Description};
use crate::report::{CloseReason, Kind};

/// Codex, as the project knows it ([`crate::agent`]). Its own approvals
/// end in `Interrupt` or `PostToolUse`; a subagent's Esc fires no hook (its
/// own rollout says `turn_aborted`), so only a subagent's transcript is
/// watched.
pub const DESCRIPTION: Description = Description {
    name: "Codex",
    programs: &["codex"],
    one_shot: |own| matches!(agent::first_word(own), Some("exec" | "e")),
    hooks: HOOKS,
    // Codex clamps `SessionEnd` and `Interrupt` hooks to 3 s, and warns of
    // every longer one.
    hook_timeout_s: 3,
    timeouts_in_ms: false,
    classify: |event| (classify(event), None),
    transcript_watched: is_subagent,
    transcript_line_ends_dialog,
    reply_in_transcript: None,
    // Codex sets Claude Code's variable for a plugin's hooks.
    prompt_ready: None,
    hooks_lose_credential: false,
    plugin_root: Some("$CLAUDE_PLUGIN_ROOT"),
    why_not: |_| {
        "Codex was not started with `needs-you run`, which lets its approvals be answered from here"
    },
};

/// What `report-prompt install --cli codex` adds, in this order.
pub const HOOKS: &[HookSpec] = &[
    // An approval dialog opened, with the command in `tool_input`.
    hook("PermissionRequest", None, false),
    // A round ended: a question if the reply ends with one, else a close.
    hook("Stop", None, false),
    // The person typed, a tool ran, Esc, the app-server stopped: closes only.
    hook("UserPromptSubmit", None, true),
    hook("PostToolUse", None, true),
    hook("Interrupt", None, true),
    hook("SessionEnd", None, true),
];

/// A subagent's events (`agent_id`, Codex 0.171.0's `spawn_agent`): its
/// approvals are shown in the person's terminal ("Thread: Agent (…)") under
/// the person's session, so they are the person's to answer; its tools' and
/// rounds' ends close only what it asked (`close_applies`).
pub(super) fn classify(event: &Value) -> Decision {
    let name = str_field(event, "hook_event_name").unwrap_or("");
    if is_subagent(event)
        && !matches!(
            name,
            "PermissionRequest" | "PostToolUse" | "Interrupt" | "Stop"
        )
    {
        return ignore(format!("a subagent's {name}: not the person's"));
    }
    match name {
        "PermissionRequest" => Decision::Open {
            kind: Kind::Permission,
            text: from_agent(permission_text(event), event),
            options: Vec::new(),
        },
        // A subagent's reply goes to its parent, never to the person.
        "Stop" if is_subagent(event) => close(CloseReason::RoundEnd),
        "Stop" => round_end(str_field(event, "last_assistant_message")),
        "UserPromptSubmit" => close(CloseReason::PromptSubmitted),
        "PostToolUse" => close(CloseReason::ToolRan),
        "Interrupt" => close(CloseReason::Interrupted),
        "SessionEnd" => close(CloseReason::SessionEnd),
        // The plan-mode question's PreToolUse fires before Codex decides whether
        // the question is allowed at all; outside plan mode it is refused, so
        // reporting it would ring for a question nobody was asked.
        "PreToolUse" => {
            ignore("PreToolUse is not reported for Codex (the plan-mode question, on purpose)")
        }
        "SubagentStop" => ignore("SubagentStop: a subagent's round, not the person's"),
        "" => ignore("no hook_event_name"),
        other => ignore(format!("{other} is not a question event")),
    }
}

/// What is being asked: the command when there is one, else the tool's own words.
fn permission_text(event: &Value) -> String {
    let input = event.get("tool_input");
    let command = input.and_then(|i| i.get("command")).and_then(|c| match c {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    });
    let described = input
        .and_then(|i| str_field(i, "description").or_else(|| str_field(i, "justification")))
        .or_else(|| str_field(event, "message"))
        .map(str::to_owned);
    let tool = str_field(event, "tool_name").unwrap_or("a tool");
    command_with_description(command.as_deref(), described.as_deref())
        .or_else(|| {
            command
                .filter(|c| !c.is_empty())
                .map(|c| format!("Codex wants to run: {c}"))
        })
        .unwrap_or_else(|| format!("Codex needs your permission to use {tool}"))
}

/// Whether a line that Codex appended to a rollout means that the dialog
/// it asked is gone. A subagent's approval denied with Esc fires no hook
/// (checked with 0.171.0: no `Interrupt`, no `PostToolUse`), but the
/// subagent's own rollout, whose path its `PermissionRequest` names, records
/// `turn_aborted` for the turn that asked.
pub fn transcript_line_ends_dialog(line: &str) -> bool {
    if !line.contains("turn_aborted") {
        return false; // most lines, without parsing them
    }
    let Ok(entry) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    str_field(&entry, "type") == Some("event_msg")
        && entry.get("payload").and_then(|p| str_field(p, "type")) == Some("turn_aborted")
}

#[cfg(test)]
mod tests {
    use crate::classify::{classify as run, Decision};
    use crate::report::{Cli, CloseReason, Kind};
    use serde_json::{json, Value};

    fn event(name: &str, extra: Value) -> Value {
        let mut v = json!({"session_id": "019a-codex", "transcript_path": null, "cwd": "/w",
            "hook_event_name": name, "model": "gpt-5-codex", "turn_id": "t1"});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    }

    fn decide(v: &Value) -> Decision {
        let c = run(Cli::Codex, v);
        assert_eq!(c.session.as_deref(), Some("019a-codex"));
        c.decision
    }

    #[test]
    fn permission_request_opens_with_the_command() {
        let v = event(
            "PermissionRequest",
            json!({"tool_name": "Bash",
            "tool_input": {"command": "rm -rf build", "description": "Clean the build folder"}}),
        );
        assert_eq!(
            decide(&v),
            Decision::Open {
                kind: Kind::Permission,
                text: "Clean the build folder\n$ rm -rf build".into(),
                options: vec![]
            }
        );
        let v = event(
            "PermissionRequest",
            json!({"tool_name": "shell", "tool_input": {"command": ["git", "push"]}}),
        );
        assert_eq!(
            decide(&v),
            Decision::Open {
                kind: Kind::Permission,
                text: "Codex wants to run: git push".into(),
                options: vec![]
            }
        );
        let v = event("PermissionRequest", json!({"tool_name": "apply_patch"}));
        assert_eq!(
            decide(&v),
            Decision::Open {
                kind: Kind::Permission,
                text: "Codex needs your permission to use apply_patch".into(),
                options: vec![]
            }
        );
    }

    #[test]
    fn stop_opens_a_reply_or_ends_the_round() {
        let v = event(
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": "Want me to push it？"}),
        );
        assert!(matches!(
            decide(&v),
            Decision::Open {
                kind: Kind::Reply,
                ..
            }
        ));
        let v = event(
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": "Pushed."}),
        );
        assert_eq!(
            decide(&v),
            Decision::Close {
                reason: CloseReason::RoundEnd
            }
        );
    }

    #[test]
    fn closing_events() {
        for (name, reason) in [
            ("UserPromptSubmit", CloseReason::PromptSubmitted),
            ("PostToolUse", CloseReason::ToolRan),
            ("Interrupt", CloseReason::Interrupted),
            ("SessionEnd", CloseReason::SessionEnd),
        ] {
            assert_eq!(
                decide(&event(name, json!({}))),
                Decision::Close { reason },
                "{name}"
            );
        }
    }

    #[test]
    fn plan_mode_question_and_unknown_events_are_ignored() {
        let v = event(
            "PreToolUse",
            json!({"tool_name": "request_user_input", "tool_input": {"questions": []}}),
        );
        assert!(matches!(decide(&v), Decision::Ignore { .. }));
        assert!(matches!(
            decide(&event("SubagentStop", json!({}))),
            Decision::Ignore { .. }
        ));
        assert!(matches!(
            decide(&event("SessionStart", json!({}))),
            Decision::Ignore { .. }
        ));
    }

    #[test]
    fn a_turn_aborted_in_a_rollout_ends_the_dialog() {
        use super::transcript_line_ends_dialog as ends;
        // As Codex 0.171.0 wrote them in a subagent's rollout, shortened.
        assert!(ends(
            r#"{"timestamp":"2026-12-01T21:49:03.699Z","ordinal":14,"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#
        ));
        assert!(!ends(
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_4","output":"aborted by user"}}"#
        ));
        assert!(!ends(
            r#"{"type":"event_msg","payload":{"type":"token_count"}}"#
        ));
        assert!(!ends("not json"));
    }

    #[test]
    fn a_subagent_s_approval_is_the_person_s_and_its_ends_close_only_its_own() {
        // As Codex 0.171.0 sent it for a spawn_agent subagent, shortened.
        let sub = json!({"agent_id": "01a2-sub", "agent_type": "default"});
        let with = |name: &str, extra: Value| {
            let mut v = event(name, sub.clone());
            v.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            v
        };
        let v = with(
            "PermissionRequest",
            json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf sub-build"}}),
        );
        assert_eq!(
            decide(&v),
            Decision::Open {
                kind: Kind::Permission,
                text: "Codex wants to run: rm -rf sub-build\n(from a subagent)".into(),
                options: vec![],
            }
        );
        assert_eq!(run(Cli::Codex, &v).agent.as_deref(), Some("01a2-sub"));
        let closes = |v: &Value| match decide(v) {
            Decision::Close { reason } => reason,
            d => panic!("{d:?}"),
        };
        assert_eq!(
            closes(&with("PostToolUse", json!({}))),
            CloseReason::ToolRan
        );
        assert_eq!(
            closes(&with("Interrupt", json!({}))),
            CloseReason::Interrupted
        );
        // Its reply is its parent's to read, even one ending with a question.
        let stop = with("Stop", json!({"last_assistant_message": "Shall I go on?"}));
        assert_eq!(closes(&stop), CloseReason::RoundEnd);
        assert!(matches!(
            decide(&with("UserPromptSubmit", json!({}))),
            Decision::Ignore { .. }
        ));
    }
}
