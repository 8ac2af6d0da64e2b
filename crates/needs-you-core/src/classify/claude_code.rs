//! Claude Code's hook events (the user-level `settings.json` hooks): which
//! ones we install, and what each means.

use serde_json::Value;

use serde_json::json;

use super::elicitation;
use super::event::{
    close, command_with_description, dialog, dialog_questions, from_agent, hook, ignore,
    is_subagent, round_end, str_field, waiting_hook, with_why_too_large, Decision, HookSpec,
    Takeable,
};
use crate::afar::{self, Afar, AnswerBody, DialogQuestion, Verdict};
use crate::agent::{self, Description};
use crate::report::{CloseReason, Kind};
use crate::request::Request;
use crate::text;

pub(super) const ASK_TOOL: &str = "AskUserQuestion";

/// Claude Code, as the project knows it ([`crate::agent`]).
pub const DESCRIPTION: Description = Description {
    name: "Claude Code",
    programs: &["claude", "claude.exe"],
    one_shot: |own| own.iter().any(|a| matches!(*a, "-p" | "--print")),
    hooks: HOOKS,
    hook_timeout_s: agent::HOOK_TIMEOUT_S,
    timeouts_in_ms: false,
    classify: |event| (classify(event), takeable(event)),
    // A denial or Esc fires no hook: every dialog's transcript is watched.
    transcript_watched: |_| true,
    transcript_line_ends_dialog,
    reply_in_transcript: None,
    prompt_ready: Some(agent::prompt_alone_between_rules),
    hooks_lose_credential: false,
    plugin_root: Some("$CLAUDE_PLUGIN_ROOT"),
    why_not: |kind| {
        match kind {
        Kind::Permission => {
            "Claude Code takes this one only in its terminal (a plan's approval, or an older report-prompt)"
        }
        _ => agent::WHY_NOT,
    }
    },
};

/// What `report-prompt install --cli claude-code` adds, in this order.
pub const HOOKS: &[HookSpec] = &[
    // The question dialog is about to open; its questions are in `tool_input`.
    hook("PreToolUse", Some(ASK_TOOL), false),
    // A permission dialog opened: what it asks, kept until it is confirmed;
    // its hook then waits, while the dialog is on screen, for an answer
    // from afar (a dialog's choices, or a permission's decision).
    waiting_hook("PermissionRequest"),
    // A permission dialog has been open for about six seconds.
    hook("Notification", Some("permission_prompt"), false),
    // An MCP server asks the person to fill in a form (or open a page), and
    // the person accepted, declined or cancelled it.
    hook("Elicitation", None, false),
    hook("ElicitationResult", None, true),
    // A round ended: a question if the reply ends with one, else a close.
    hook("Stop", None, false),
    // The person typed, a tool ran or failed, the CLI quit: closes only.
    hook("UserPromptSubmit", None, true),
    hook("PostToolUse", None, true),
    hook("PostToolUseFailure", None, true),
    hook("SessionEnd", None, true),
    // A subagent ended: what it asked and left open is gone with it.
    hook("SubagentStop", None, true),
];

/// A subagent's events: its dialogs and permissions are the person's to
/// answer (Claude Code shows them in the person's terminal, under the
/// person's session), and its tools' ends close what it asked; its round
/// ends and replies are not the person's.
pub(super) fn classify(event: &Value) -> Decision {
    let tool = str_field(event, "tool_name");
    if is_subagent(event) {
        return match (str_field(event, "hook_event_name").unwrap_or(""), tool) {
            (
                "PreToolUse" | "PermissionRequest" | "PostToolUse" | "PostToolUseFailure"
                | "Elicitation" | "ElicitationResult",
                _,
            ) => person_s(event, tool),
            // Its dialogs end with it (a permission denied in the terminal
            // leaves no mark in any transcript; the subagent then goes on or
            // stops). Closes only what this subagent asked (close_applies).
            ("SubagentStop", _) => close(CloseReason::RoundEnd),
            (other, _) => ignore(format!("a subagent's {other}: not the person's")),
        };
    }
    person_s(event, tool)
}

fn person_s(event: &Value, tool: Option<&str>) -> Decision {
    match str_field(event, "hook_event_name").unwrap_or("") {
        "PreToolUse" if tool == Some(ASK_TOOL) => match dialog(
            event.get("tool_input").and_then(|i| i.get("questions")),
            "Claude Code is asking a question",
        ) {
            Decision::Open {
                kind,
                text,
                options,
            } => Decision::Open {
                kind,
                text: from_agent(text, event),
                options,
            },
            other => other,
        },
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
            text: from_agent(
                permission_text(tool.unwrap_or("a tool"), event.get("tool_input")),
                event,
            ),
        },
        // Shown at once, and answered only in the terminal: the dialog opens
        // once this hook has returned, so it cannot wait for an answer.
        "Elicitation" => {
            let (text, options) = elicitation::question(
                str_field(event, "mcp_server_name").unwrap_or(""),
                str_field(event, "message").unwrap_or(""),
                str_field(event, "url"),
                event.get("requested_schema"),
            );
            Decision::Open {
                kind: Kind::Dialog,
                text: from_agent(text, event),
                options,
            }
        }
        // Esc cancels; accepting or declining is the person's answer.
        "ElicitationResult" => match str_field(event, "action") {
            Some("cancel") => close(CloseReason::Dismissed),
            _ => close(CloseReason::Answered),
        },
        "Stop" => round_end(str_field(event, "last_assistant_message")),
        // A background subagent's end reaches its parent as a prompt that
        // nobody typed: it answers nothing that is open.
        "UserPromptSubmit" if is_task_notification(event) => {
            ignore("a background task's notice to the agent, not the person's prompt")
        }
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

/// Claude Code 2.1.332 tells the agent that a background task (a subagent)
/// finished by submitting a prompt of its own, `<task-notification>…`.
fn is_task_notification(event: &Value) -> bool {
    str_field(event, "prompt").is_some_and(|p| p.trim_start().starts_with("<task-notification>"))
}

/// Claude Code's plan approval: its hook's answer is not taken (checked with
/// 2.1.332: the dialog stays on screen), so it is answered in the terminal.
pub const PLAN_TOOL: &str = "ExitPlanMode";

/// A plan's approval, in Claude Code's own words, with the plan when known:
/// from the tool's input, or (2.1.332, whose input is `{}`) from the plan
/// file that the session's transcript names ([`transcript_plan_file`]).
pub fn plan_text(plan: Option<&str>) -> String {
    let words = "Claude Code needs your approval for the plan".to_owned();
    match plan.map(str::trim).filter(|p| !p.is_empty()) {
        Some(plan) => format!("{words}\n\n{plan}"),
        None => words,
    }
}

/// The plan file that a line of Claude Code's transcript names: in plan
/// mode it reminds the model, in an attachment of type `plan_mode`, where to
/// write the plan (`planFilePath`). Only an absolute path to a Markdown file
/// in a `plans` folder counts, which is where Claude Code keeps them; the
/// reporter further reads it only in the transcript's own Claude Code folder,
/// as a regular file, never through a symbolic link.
pub fn transcript_plan_file(line: &str) -> Option<String> {
    if !line.contains("planFilePath") {
        return None; // most lines, without parsing them
    }
    let entry = serde_json::from_str::<Value>(line).ok()?;
    let attachment = entry.get("attachment")?;
    if str_field(attachment, "type") != Some("plan_mode") || is_subagent_entry(&entry) {
        return None;
    }
    let path = std::path::Path::new(str_field(attachment, "planFilePath")?);
    let in_plans = path.parent()?.file_name()? == "plans";
    let markdown = path.extension()? == "md";
    (path.is_absolute()
        && in_plans
        && markdown
        && !path.components().any(|c| c.as_os_str() == ".."))
    .then(|| path.to_string_lossy().into_owned())
}

/// What of this event Claude Code lets a hook answer: a question dialog
/// (`AskUserQuestion`, its choices, from `PreToolUse` on and in the
/// `PermissionRequest` that follows) and any other permission's decision,
/// through the `PermissionRequest` hook, which runs while the dialog is on
/// screen. Both events carry the same `tool_input`, so the same digest.
///
/// A backgrounded subagent's dialog is shown only once its
/// `PermissionRequest` hook has returned (checked with 2.1.332): a hook that
/// waited for an answer from afar would hide it, and the prompt that lists it
/// would never come. So a subagent's dialogs are listed, with what they ask,
/// and answered in the terminal.
pub(super) fn takeable(event: &Value) -> Option<Takeable> {
    if is_subagent(event) {
        return None;
    }
    let tool = str_field(event, "tool_name")?;
    // Decided on the event's name first: every other event (a `PostToolUse`
    // with a whole file in its input) costs nothing here.
    let takes = match (str_field(event, "hook_event_name")?, tool) {
        ("PreToolUse" | "PermissionRequest", ASK_TOOL) => Afar::Choices,
        ("PermissionRequest", PLAN_TOOL) => return None,
        ("PermissionRequest", _) => Afar::Decision,
        _ => return None,
    };
    let empty = json!({});
    let input = event.get("tool_input").unwrap_or(&empty);
    let questions = match takes {
        Afar::Choices => dialog_questions(input.get("questions"), true),
        _ => Vec::new(),
    };
    let mut request = Request::new(tool, input);
    if takes == Afar::Decision {
        request.lasting = suggestions(event);
    }
    Takeable::with_lasting(takes, request, questions)
}

/// The lasting choices a `PermissionRequest` suggests
/// (`permission_suggestions`, its dialog's "Yes, and don't ask again for
/// …"), as given; none if there are more than a request carries.
fn suggestions(event: &Value) -> Vec<Value> {
    match event.get("permission_suggestions") {
        Some(Value::Array(s)) if s.len() <= crate::request::MAX_SUGGESTIONS => s.clone(),
        _ => Vec::new(),
    }
}

/// What the `PermissionRequest` hook prints to take `answer` for its own
/// `request`: allow once or deny for a permission, or allow with the one
/// suggestion of its own that a lasting choice names
/// (`updatedPermissions`, which Claude Code writes where the suggestion
/// says); for `AskUserQuestion`, allow with its input and the answers, each
/// question's text to its label (several joined by ", ", as Claude Code
/// shows a multiple choice), a typed answer as it is. `Null`: nothing this
/// dialog offers.
pub fn hook_output(answer: &AnswerBody, request: &Request, questions: &[DialogQuestion]) -> Value {
    let decision = match answer {
        AnswerBody::Decision {
            decision: Verdict::Allow,
            ..
        } => json!({"behavior": "allow"}),
        AnswerBody::Decision {
            decision: Verdict::Lasting(id),
            ..
        } => match crate::lasting::find(request, id) {
            Some(l) => json!({"behavior": "allow", "updatedPermissions": [l.suggestion]}),
            None => return Value::Null,
        },
        AnswerBody::Decision {
            decision: Verdict::Deny,
            message,
        } => json!({"behavior": "deny",
            "message": message.clone().unwrap_or_else(|| "Denied from afar (needs-you)".to_owned())}),
        AnswerBody::Choices { choices } => {
            let answers: serde_json::Map<String, Value> = questions
                .iter()
                .zip(choices)
                .map(|(q, c)| (q.question.clone(), Value::String(c.join(", "))))
                .collect();
            let mut input = request.input.clone();
            input["answers"] = Value::Object(answers);
            json!({"behavior": "allow", "updatedInput": input})
        }
        AnswerBody::Text { .. } => return Value::Null,
    };
    json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
}

/// What a permission dialog asks, as its card shows it ([`request_text`]);
/// for a request too large to answer from afar, why, and what fits.
fn permission_text(tool: &str, input: Option<&Value>) -> String {
    if tool == PLAN_TOOL {
        return plan_text(input.and_then(|i| str_field(i, "plan")));
    }
    let request = Request::new(tool, input.unwrap_or(&json!({})));
    with_why_too_large(&request, text::visible(&request_text(tool, &request.input)))
}

/// A permission request's card: what it runs, writes or changes, in Claude
/// Code's terms (the command and why; a file's whole content; an edit as a
/// diff; the MCP server and tool), then every other field of its input.
pub(super) fn request_text(tool: &str, input: &Value) -> String {
    use crate::request::{diff, one_line, rest_lines, take_str, with_rest};
    let mut rest = match input {
        Value::Object(o) => o.clone(),
        Value::Null => serde_json::Map::new(),
        other => serde_json::Map::from_iter([("input".to_owned(), other.clone())]),
    };
    let file = take_str(&mut rest, "file_path");
    let head = match (tool, file) {
        ("Bash", file) => {
            // Shown with the rest, if a command ever has one.
            rest.extend(file.map(|f| ("file_path".to_owned(), Value::String(f))));
            let command = take_str(&mut rest, "command");
            let description = take_str(&mut rest, "description").map(|d| one_line(&d));
            command_with_description(command.as_deref(), description.as_deref())
                .or_else(|| command.map(|c| format!("Claude Code wants to run: {c}")))
                .unwrap_or_else(|| "Claude Code wants to run a command".to_owned())
        }
        ("Write", Some(f)) => match take_str(&mut rest, "content") {
            Some(content) => format!("Claude Code wants to write {f}:\n\n{content}"),
            None => format!("Claude Code wants to write {f}"),
        },
        ("Edit", Some(f)) => {
            match (
                take_str(&mut rest, "old_string"),
                take_str(&mut rest, "new_string"),
            ) {
                (Some(old), Some(new)) => {
                    format!("Claude Code wants to edit {f}:\n\n{}", diff(&old, &new))
                }
                (old, new) => {
                    // Put back what a diff could not show.
                    rest.extend(old.map(|o| ("old_string".to_owned(), Value::String(o))));
                    rest.extend(new.map(|n| ("new_string".to_owned(), Value::String(n))));
                    format!("Claude Code wants to edit {f}")
                }
            }
        }
        ("MultiEdit", Some(f)) => match rest.remove("edits") {
            Some(Value::Array(edits)) => {
                let shown: Vec<String> = edits
                    .iter()
                    .map(|e| {
                        let mut e = e.as_object().cloned().unwrap_or_default();
                        let old = take_str(&mut e, "old_string").unwrap_or_default();
                        let new = take_str(&mut e, "new_string").unwrap_or_default();
                        let changed = diff(&old, &new);
                        if e.is_empty() {
                            changed
                        } else {
                            format!("{changed}\n{}", rest_lines(&e))
                        }
                    })
                    .collect();
                format!("Claude Code wants to edit {f}:\n\n{}", shown.join("\n\n"))
            }
            other => {
                rest.extend(other.map(|e| ("edits".to_owned(), e)));
                format!("Claude Code wants to edit {f}")
            }
        },
        (_, Some(f)) => format!("Claude Code wants to use {tool} on {f}"),
        (_, None) => match (mcp_tool(tool), take_str(&mut rest, "url")) {
            (_, Some(u)) => format!("Claude Code wants to use {tool} on {u}"),
            (Some((server, name)), None) => {
                format!("Claude Code wants to use {name} of the MCP server {server}")
            }
            (None, None) => format!("Claude Code needs your permission to use {tool}"),
        },
    };
    with_rest(head, &rest)
}

/// An MCP server's tool, as Claude Code names it: `mcp__<server>__<tool>`.
fn mcp_tool(tool: &str) -> Option<(&str, &str)> {
    let (server, name) = tool.strip_prefix("mcp__")?.split_once("__")?;
    (!server.is_empty() && !name.is_empty()).then_some((server, name))
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

/// What a line of Claude Code's transcript says of tool uses: the model's
/// use of a tool (its id, and [`afar::digest`] of the tool and its input), or
/// a tool's result (the id of the use it ends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolEvent {
    Used { id: String, digest: String },
    Ended { id: String },
}

/// The tool uses and results in one line of a transcript, in order; none
/// for any other line, or a subagent's. A waiting hook follows these to learn
/// that its dialog was answered in the terminal: Claude Code writes the
/// tool's result then, but does not end the hook.
pub fn transcript_tool_events(line: &str) -> Vec<ToolEvent> {
    let Ok(entry) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    if is_subagent_entry(&entry) {
        return Vec::new();
    }
    let content = entry.get("message").and_then(|m| m.get("content"));
    let Some(items) = content.and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|i| match str_field(i, "type")? {
            "tool_use" => Some(ToolEvent::Used {
                id: str_field(i, "id")?.to_owned(),
                digest: afar::digest(str_field(i, "name")?, i.get("input").unwrap_or(&json!({}))),
            }),
            "tool_result" => Some(ToolEvent::Ended {
                id: str_field(i, "tool_use_id")?.to_owned(),
            }),
            _ => None,
        })
        .collect()
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

    #[test]
    fn a_transcript_line_names_the_tool_uses_it_makes_and_ends() {
        use super::{transcript_tool_events, ToolEvent};
        let input = json!({"command": "rm -rf build", "description": "Clean"});
        let used = json!({"type": "assistant", "message": {"content": [
            {"type": "text", "text": "I will clean."},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": input}]}});
        assert_eq!(
            transcript_tool_events(&used.to_string()),
            vec![ToolEvent::Used {
                id: "toolu_1".into(),
                digest: crate::afar::digest("Bash", &input)
            }]
        );
        let ended = json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"}]}});
        assert_eq!(
            transcript_tool_events(&ended.to_string()),
            vec![ToolEvent::Ended {
                id: "toolu_1".into()
            }]
        );
        let sidechain = json!({"type": "user", "isSidechain": true, "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_9"}]}});
        assert!(transcript_tool_events(&sidechain.to_string()).is_empty());
        assert!(transcript_tool_events("not json").is_empty());
        assert!(transcript_tool_events(r#"{"type":"user","message":{"content":"hi"}}"#).is_empty());
    }

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
            json!({"tool_name": "Edit", "tool_input": {"file_path": "/w/src/main.rs",
                "old_string": "a", "new_string": "b"}}),
        );
        assert_eq!(
            decide(&edit),
            Decision::Expect {
                kind: Kind::Permission,
                text: "Claude Code wants to edit /w/src/main.rs:\n\n- a\n+ b".into()
            }
        );
        let read = with(
            "PermissionRequest",
            json!({"tool_name": "Read", "tool_input": {"file_path": "/w/.env"}}),
        );
        assert_eq!(
            decide(&read),
            Decision::Expect {
                kind: Kind::Permission,
                text: "Claude Code wants to use Read on /w/.env".into()
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
    fn what_a_hook_may_answer_and_how_it_says_it() {
        use crate::afar::{Afar, AnswerBody, Verdict};
        let ask = json!({"questions": [
            {"question": "Which DB?", "header": "DB", "multiSelect": false,
             "options": [{"label": "SQLite", "description": "local"}, {"label": "Postgres", "description": "server"}]},
            {"question": "Which features?", "header": "F", "multiSelect": true,
             "options": [{"label": "Login", "description": "a"}, {"label": "Search", "description": "b"}]}]});
        let pre = with(
            "PreToolUse",
            json!({"tool_name": "AskUserQuestion", "tool_input": ask}),
        );
        let req = with(
            "PermissionRequest",
            json!({"tool_name": "AskUserQuestion", "tool_input": ask}),
        );
        let a = run(Cli::ClaudeCode, &pre).takeable.unwrap();
        let b = run(Cli::ClaudeCode, &req).takeable.unwrap();
        assert_eq!(
            a, b,
            "the dialog and its permission request are one request"
        );
        assert_eq!(a.takes.takes, Afar::Choices);
        assert!(a.questions[1].multi_select && a.questions[0].other);
        let out = super::hook_output(
            &AnswerBody::Choices {
                choices: vec![
                    vec!["Postgres".into()],
                    vec!["Login".into(), "Search".into()],
                ],
            },
            &a.request,
            &a.questions,
        );
        assert_eq!(out["hookSpecificOutput"]["decision"]["behavior"], "allow");
        assert_eq!(
            out["hookSpecificOutput"]["decision"]["updatedInput"]["answers"],
            json!({"Which DB?": "Postgres", "Which features?": "Login, Search"})
        );
        assert_eq!(
            out["hookSpecificOutput"]["decision"]["updatedInput"]["questions"],
            ask["questions"]
        );

        let bash = with(
            "PermissionRequest",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}),
        );
        let t = run(Cli::ClaudeCode, &bash).takeable.unwrap();
        assert_eq!(t.takes.takes, Afar::Decision);
        let deny = super::hook_output(
            &AnswerBody::Decision {
                decision: Verdict::Deny,
                message: None,
            },
            &t.request,
            &[],
        );
        assert_eq!(deny["hookSpecificOutput"]["decision"]["behavior"], "deny");
        let allow = super::hook_output(
            &AnswerBody::Decision {
                decision: Verdict::Allow,
                message: None,
            },
            &t.request,
            &[],
        );
        // A lasting choice applies the dialog's own suggestion, as given,
        // and only one it offers.
        let rule = json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test *"}],
                          "behavior": "allow", "destination": "localSettings"});
        let npm = with(
            "PermissionRequest",
            json!({"tool_name": "Bash", "tool_input": {"command": "npm test"},
                   "permission_suggestions": [rule]}),
        );
        let n = run(Cli::ClaudeCode, &npm).takeable.unwrap();
        assert_eq!(n.request.lasting, vec![rule.clone()]);
        assert_eq!(
            n.takes.digest,
            crate::afar::digest("Bash", &json!({"command": "npm test"})),
            "the digest is the tool and its input"
        );
        let keep = |id: String| AnswerBody::Decision {
            decision: Verdict::Lasting(id),
            message: None,
        };
        let kept = super::hook_output(&keep(crate::lasting::id_of(&rule)), &n.request, &[]);
        assert_eq!(
            kept["hookSpecificOutput"]["decision"],
            json!({"behavior": "allow", "updatedPermissions": [rule]})
        );
        let mut wider = rule.clone();
        wider["rules"][0]["ruleContent"] = json!("*");
        let made_up = super::hook_output(&keep(crate::lasting::id_of(&wider)), &n.request, &[]);
        assert_eq!(made_up, Value::Null, "a suggestion this dialog never made");
        assert_eq!(
            allow["hookSpecificOutput"]["decision"],
            json!({"behavior": "allow"}),
            "once: nothing more"
        );

        let plan = with(
            "PermissionRequest",
            json!({"tool_name": "ExitPlanMode", "tool_input": {}}),
        );
        assert_eq!(
            run(Cli::ClaudeCode, &plan).takeable,
            None,
            "a plan's approval is the terminal's"
        );
        // A subagent's dialog shows only once its hook returned: no waiting there.
        let sub = with(
            "PermissionRequest",
            json!({"agent_id": "a", "tool_name": "Bash", "tool_input": {}}),
        );
        let c = run(Cli::ClaudeCode, &sub);
        assert_eq!(c.takeable, None);
        assert_eq!(c.agent.as_deref(), Some("a"));
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
    fn an_mcp_elicitation_is_a_dialog_with_its_choices_closed_by_its_result() {
        // As Claude Code 2.1.332 sent it (the live suite's MCP server).
        let v = with(
            "Elicitation",
            json!({"mcp_server_name": "asker", "message": "Which environment should I deploy to?",
            "mode": "form", "requested_schema": {"type": "object", "required": ["environment"],
            "properties": {"environment": {"type": "string", "title": "Environment",
            "enum": ["staging", "production"]}}}}),
        );
        match decide(&v) {
            Decision::Open {
                kind,
                text,
                options,
            } => {
                assert_eq!(kind, Kind::Dialog);
                assert_eq!(
                    text,
                    "Which environment should I deploy to?\n(from the MCP server asker)"
                );
                let labels: Vec<_> = options.iter().map(|o| o.label.as_str()).collect();
                assert_eq!(labels, ["staging", "production"]);
            }
            other => panic!("{other:?}"),
        }
        assert!(super::takeable(&v).is_none(), "answered in the terminal");
        let result = |action: &str| {
            reason(&with(
                "ElicitationResult",
                json!({"mcp_server_name": "asker", "mode": "form", "action": action}),
            ))
        };
        assert_eq!(result("accept"), CloseReason::Answered);
        assert_eq!(result("decline"), CloseReason::Answered);
        assert_eq!(result("cancel"), CloseReason::Dismissed);
        // A subagent's MCP call asks the person too.
        let mut sub = v.clone();
        sub["agent_id"] = json!("a1");
        sub["agent_type"] = json!("Explore");
        assert!(
            matches!(decide(&sub), Decision::Open { text, .. } if text.ends_with("(from the Explore agent)"))
        );
    }

    #[test]
    fn a_subagent_s_end_closes_and_its_notice_to_the_parent_is_no_prompt() {
        // As Claude Code 2.1.332 sent them, shortened.
        let stop = with(
            "SubagentStop",
            json!({"agent_id": "a94", "agent_type": "general-purpose",
            "last_assistant_message": "Shall I also remove dist?"}),
        );
        assert_eq!(
            reason(&stop),
            CloseReason::RoundEnd,
            "a subagent's question is its parent's to answer"
        );
        let c = run(Cli::ClaudeCode, &stop);
        assert_eq!(c.agent.as_deref(), Some("a94"));
        let notice = with(
            "UserPromptSubmit",
            json!({"prompt": "<task-notification>\n<task-id>a94</task-id>\n<status>completed</status>"}),
        );
        assert!(matches!(decide(&notice), Decision::Ignore { .. }));
        let typed = with(
            "UserPromptSubmit",
            json!({"prompt": "go on <task-notification>"}),
        );
        assert_eq!(reason(&typed), CloseReason::PromptSubmitted);
    }

    #[test]
    fn an_mcp_tool_s_permission_names_the_tool_and_its_server() {
        let v = with(
            "PermissionRequest",
            json!({"tool_name": "mcp__asker__choose_environment", "tool_input": {}}),
        );
        assert!(matches!(decide(&v), Decision::Expect { text, .. }
            if text == "Claude Code wants to use choose_environment of the MCP server asker"));
        let odd = with(
            "PermissionRequest",
            json!({"tool_name": "mcp__x", "tool_input": {}}),
        );
        assert!(matches!(decide(&odd), Decision::Expect { text, .. }
            if text == "Claude Code needs your permission to use mcp__x"));
    }

    #[test]
    fn a_plan_s_approval_is_in_claude_code_s_words_with_the_plan_when_given() {
        let plan = |input: Value| match decide(&with(
            "PermissionRequest",
            json!({"tool_name": "ExitPlanMode", "tool_input": input}),
        )) {
            Decision::Expect { text, .. } => text,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            plan(json!({})),
            "Claude Code needs your approval for the plan"
        );
        assert_eq!(
            plan(json!({"plan": "1. Remove build/\n2. Rebuild\n"})),
            "Claude Code needs your approval for the plan\n\n1. Remove build/\n2. Rebuild"
        );
    }

    #[test]
    fn the_plan_file_is_the_one_a_plan_mode_attachment_names() {
        use super::transcript_plan_file as plan_file;
        // As Claude Code 2.1.332 wrote it, shortened.
        let line = |path: &str| {
            json!({"type": "attachment", "isSidechain": false, "attachment": {"type": "plan_mode",
            "reminderType": "full", "isSubAgent": false, "planFilePath": path, "planExists": false}})
            .to_string()
        };
        assert_eq!(
            plan_file(&line(
                "/home/u/.claude/plans/plan-the-cleanup-functional-flask.md"
            ))
            .as_deref(),
            Some("/home/u/.claude/plans/plan-the-cleanup-functional-flask.md")
        );
        for elsewhere in [
            "/home/u/.ssh/id_ed25519",
            "/home/u/.claude/plans/../settings.json",
            "/home/u/notes/plan.md",
            "plans/plan.md",
        ] {
            assert_eq!(plan_file(&line(elsewhere)), None, "{elsewhere}");
        }
        let exit = json!({"type": "attachment", "attachment": {"type": "plan_mode_exit",
            "planFilePath": "/home/u/.claude/plans/p.md"}});
        assert_eq!(plan_file(&exit.to_string()), None);
        assert_eq!(plan_file("not json planFilePath"), None);
    }

    #[test]
    fn a_subagent_s_dialogs_are_the_person_s_and_its_round_ends_are_not() {
        let v = with(
            "PreToolUse",
            json!({"agent_id": "a1", "agent_type": "Explore", "tool_name": "AskUserQuestion",
            "tool_input": {"questions": [{"question": "Q?"}]}}),
        );
        match decide(&v) {
            Decision::Open { kind, text, .. } => {
                assert_eq!(kind, Kind::Dialog);
                assert_eq!(text, "Q?\n(from the Explore agent)");
            }
            other => panic!("{other:?}"),
        }
        let v = with(
            "PermissionRequest",
            json!({"agent_id": "a1", "agent_type": "general-purpose", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf build", "description": "Remove the build folder"}}),
        );
        assert_eq!(
            decide(&v),
            Decision::Expect {
                kind: Kind::Permission,
                text: "Remove the build folder\n$ rm -rf build\n(from the general-purpose agent)"
                    .into()
            }
        );
        let v = with(
            "PostToolUse",
            json!({"agent_id": "a1", "tool_name": "Bash", "tool_response": {}}),
        );
        assert_eq!(
            decide(&v),
            Decision::Close {
                reason: CloseReason::ToolRan
            }
        );
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
