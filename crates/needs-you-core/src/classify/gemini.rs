//! Gemini CLI's hook events (`~/.gemini/settings.json`, or our extension's
//! `hooks/hooks.json`; checked with Gemini CLI 0.61.0): which ones we
//! install, and what each means.
//!
//! Its permission dialog is told by `Notification` with `notification_type`
//! `ToolPermission`, fired before the dialog is drawn (Gemini CLI waits for
//! the hook, so ours returns at once), with what it asks in `details`. The
//! model's question is its `ask_user` tool, whose questions `BeforeTool`
//! carries (the notification only says "Ask User"). A round ends in
//! `AfterAgent`, whose `prompt_response` repeats pieces of a reply that
//! streamed in several chunks: the reporter reads the reply from the
//! session's transcript instead ([`REPLY_IN_TRANSCRIPT`]). Nothing is taken
//! from afar: its hooks can deny a tool or force its dialog, never grant it,
//! nor answer a dialog on screen; a reply is typed into its pane.

use serde_json::Value;

use super::event::{
    close, command_with_description, dialog, hook, ignore, round_end, str_field, Decision, HookSpec,
};
use crate::agent::{self, Description, ReplyInTranscript};
use crate::report::{CloseReason, Kind};

/// The tool the model asks the person with.
pub const ASK_TOOL: &str = "ask_user";

/// Gemini CLI, as the project knows it ([`crate::agent`]). A denial (Esc)
/// fires no hook; its transcript says it, so every dialog's is watched.
pub const DESCRIPTION: Description = Description {
    name: "Gemini CLI",
    // `gemini` from npm's bin folder, `gemini.js` when node is handed the
    // bundle itself.
    programs: &["gemini", "gemini.js"],
    one_shot: |own| {
        own.iter()
            .any(|a| matches!(*a, "-p" | "--prompt") || a.starts_with("--prompt="))
    },
    hooks: HOOKS,
    hook_timeout_s: agent::HOOK_TIMEOUT_S,
    timeouts_in_ms: true,
    classify: |event| (classify(event), None),
    transcript_watched: |_| true,
    transcript_line_ends_dialog,
    reply_in_transcript: Some(REPLY_IN_TRANSCRIPT),
    // Substituted in the extension's `hooks/hooks.json` as it is loaded.
    prompt_ready: Some(prompt_ready),
    // Its variable redaction, when on, drops NEEDS_YOU_TOKEN from its hooks.
    hooks_lose_credential: true,
    plugin_root: Some("${extensionPath}"),
    why_not: |_| "Gemini CLI takes its answer only in its terminal",
};

/// What `report-prompt install --cli gemini` adds, in this order.
pub const HOOKS: &[HookSpec] = &[
    // A permission dialog is about to be drawn.
    hook("Notification", None, false),
    // The model asks the person: its questions are in `tool_input`.
    hook("BeforeTool", Some(ASK_TOOL), false),
    // A round ended: a question if the reply ends with one, else a close.
    hook("AfterAgent", None, false),
    // The person typed, a tool ran, the CLI quit: closes only.
    hook("BeforeAgent", None, true),
    hook("AfterTool", None, true),
    hook("SessionEnd", None, true),
];

/// `AfterAgent`'s reply, as its transcript (`~/.gemini/tmp/<project>/chats/
/// session-….jsonl`) has it: the last line of the model's.
pub const REPLY_IN_TRANSCRIPT: ReplyInTranscript = ReplyInTranscript {
    event: "AfterAgent",
    field: "prompt_response",
    text_of: model_text,
};

/// The model's text in a transcript line, if the line is the model's: its
/// `content` is a string, or a list of parts once the history is rewritten.
fn model_text(line: &str) -> Option<String> {
    let entry = serde_json::from_str::<Value>(line).ok()?;
    if str_field(&entry, "type") != Some("gemini") {
        return None;
    }
    match entry.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| str_field(p, "text"))
                .collect::<String>(),
        ),
        _ => None,
    }
}

/// Whether Gemini CLI's screen shows its prompt empty in its ordinary mode
/// (seen with 0.61.0): the input line is `>` and the placeholder "Type your
/// message"; a draft shows its text there instead, and the shell mode (`!`,
/// which stays on until Esc) shows `!` and "Type your shell command". The
/// input line is the last that starts with either sign, below what the
/// model wrote.
pub fn prompt_ready(screen: &str) -> bool {
    screen
        .lines()
        .rev()
        .map(str::trim_start)
        .find(|l| l.starts_with("> ") || l.starts_with("! ") || *l == ">" || *l == "!")
        .and_then(|l| l.strip_prefix('>'))
        .is_some_and(|rest| rest.trim_start().starts_with("Type your message"))
}

/// Whether a line of the session's transcript means its dialog is gone
/// without a hook: Esc or Ctrl+C on a dialog cancels the request.
pub fn transcript_line_ends_dialog(line: &str) -> bool {
    let Ok(entry) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    str_field(&entry, "type") == Some("info")
        && str_field(&entry, "content").is_some_and(|c| c.starts_with("Request cancelled"))
}

pub(super) fn classify(event: &Value) -> Decision {
    let tool = str_field(event, "tool_name");
    match str_field(event, "hook_event_name").unwrap_or("") {
        "Notification" if str_field(event, "notification_type") == Some("ToolPermission") => {
            let details = event.get("details");
            let detail = |k| details.and_then(|d| str_field(d, k));
            match detail("type") {
                // Its `BeforeTool` said it first, with the questions.
                Some("ask_user") => ignore("the question dialog: BeforeTool said it"),
                _ => Decision::Open {
                    kind: Kind::Permission,
                    text: permission_text(event),
                    options: Vec::new(),
                },
            }
        }
        "Notification" => ignore("a notification that is no dialog"),
        "BeforeTool" if tool == Some(ASK_TOOL) => dialog(
            event.get("tool_input").and_then(|i| i.get("questions")),
            "Gemini CLI has a question",
        ),
        "BeforeTool" => ignore("BeforeTool of a tool that asks nobody"),
        "AfterTool" if tool == Some(ASK_TOOL) => close(CloseReason::Answered),
        "AfterTool" => close(CloseReason::ToolRan),
        "AfterAgent" => round_end(str_field(event, "prompt_response")),
        "BeforeAgent" => close(CloseReason::PromptSubmitted),
        "SessionEnd" => close(CloseReason::SessionEnd),
        other => ignore(format!("{other} is not in Gemini CLI's hook table")),
    }
}

/// What a permission asks, from its `details`: the command under the
/// dialog's title for a shell command, else the title and the file, server
/// or address it names; the notification's own words when there is none.
fn permission_text(event: &Value) -> String {
    let details = event.get("details");
    let detail = |k| {
        details
            .and_then(|d| str_field(d, k))
            .filter(|v| !v.is_empty())
    };
    let title = detail("title");
    if let Some(text) = command_with_description(detail("command"), title) {
        if detail("command").is_some() {
            return text;
        }
    }
    let what = ["filePath", "fileName", "serverName", "url"]
        .into_iter()
        .find_map(detail);
    match (title, what) {
        (Some(t), Some(w)) => format!("{t}: {w}"),
        (Some(t), None) => t.to_owned(),
        (None, Some(w)) => w.to_owned(),
        (None, None) => str_field(event, "message")
            .filter(|m| !m.trim().is_empty())
            .unwrap_or("Gemini CLI needs your permission")
            .to_owned(),
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

    fn closes(event: Value) -> CloseReason {
        expect::closed(classify(&event))
    }

    #[test]
    fn a_shell_permission_opens_with_its_command_and_a_tool_run_closes_it() {
        let shown = json!({"session_id": "s", "hook_event_name": "Notification",
            "notification_type": "ToolPermission", "message": "Tool Confirm Shell Command requires execution",
            "details": {"type": "exec", "title": "Confirm Shell Command", "command": "rm -rf dist", "rootCommand": "rm"}});
        assert_eq!(
            opens(shown),
            (
                Kind::Permission,
                "Confirm Shell Command\n$ rm -rf dist".into(),
                vec![]
            )
        );
        let edit = json!({"hook_event_name": "Notification", "notification_type": "ToolPermission",
            "details": {"type": "edit", "title": "Confirm Edit", "fileName": "a.rs"}});
        assert_eq!(opens(edit).1, "Confirm Edit: a.rs");
        let bare = json!({"hook_event_name": "Notification", "notification_type": "ToolPermission",
            "message": "Tool requires confirmation"});
        assert_eq!(opens(bare).1, "Tool requires confirmation");
        let ran = json!({"hook_event_name": "AfterTool", "tool_name": "run_shell_command"});
        assert_eq!(closes(ran), CloseReason::ToolRan);
        let shell = json!({"hook_event_name": "BeforeTool", "tool_name": "run_shell_command"});
        assert!(matches!(classify(&shell), Decision::Ignore { .. }));
    }

    #[test]
    fn the_model_s_question_opens_with_its_choices_and_its_answer_closes_it() {
        let asked = json!({"hook_event_name": "BeforeTool", "tool_name": ASK_TOOL,
            "tool_input": {"questions": [{"question": "Which colour?", "header": "Colour", "type": "choice",
                "options": [{"label": "Red", "description": "warm"}, {"label": "Blue"}]}]}});
        assert_eq!(
            opens(asked),
            (
                Kind::Dialog,
                "Which colour?".into(),
                vec!["Red".into(), "Blue".into()]
            )
        );
        let said = json!({"hook_event_name": "Notification", "notification_type": "ToolPermission",
            "details": {"type": "ask_user", "title": "Ask User"}});
        assert!(matches!(classify(&said), Decision::Ignore { .. }));
        let answered = json!({"hook_event_name": "AfterTool", "tool_name": ASK_TOOL});
        assert_eq!(closes(answered), CloseReason::Answered);
    }

    #[test]
    fn a_round_that_ends_with_a_question_opens_a_reply_and_a_prompt_closes_it() {
        let asked = json!({"hook_event_name": "AfterAgent",
            "prompt_response": "I updated the code. Shall I also update the docs?"});
        assert_eq!(opens(asked).0, Kind::Reply);
        let done = json!({"hook_event_name": "AfterAgent", "prompt_response": "Done."});
        assert_eq!(closes(done), CloseReason::RoundEnd);
        let typed = json!({"hook_event_name": "BeforeAgent", "prompt": "go on"});
        assert_eq!(closes(typed), CloseReason::PromptSubmitted);
        let quit = json!({"hook_event_name": "SessionEnd", "reason": "exit"});
        assert_eq!(closes(quit), CloseReason::SessionEnd);
    }

    #[test]
    fn the_reply_is_the_model_s_last_line_in_the_transcript() {
        let said =
            r#"{"id":"a","type":"gemini","content":"Shall I also update the docs?","thoughts":[]}"#;
        assert_eq!(
            model_text(said).as_deref(),
            Some("Shall I also update the docs?")
        );
        let rewritten = r#"{"id":"b","type":"gemini","content":[{"text":"Made "},{"text":"it."}]}"#;
        assert_eq!(model_text(rewritten).as_deref(), Some("Made it."));
        let tool_call = r#"{"id":"c","type":"gemini","content":"","toolCalls":[]}"#;
        assert_eq!(model_text(tool_call).as_deref(), Some(""));
        for other in [
            r#"{"id":"d","type":"user","content":[{"text":"go"}]}"#,
            r#"{"$set":{"lastUpdated":"2026-12-05T01:05:43.357Z"}}"#,
            "not json",
        ] {
            assert_eq!(model_text(other), None, "{other}");
        }
    }

    #[test]
    fn a_reply_is_typed_only_into_an_empty_prompt_in_its_ordinary_mode() {
        let screen = |input: &str| {
            format!(
                "> update the code\n✦ Shall I also update the docs?\n{}\n Shift+Tab to accept edits\n{input}\n workspace (/directory)   sandbox   /model\n ~   no sandbox   Auto\n",
                "─".repeat(40)
            )
        };
        assert!(prompt_ready(&screen(
            " >   Type your message or @path/to/file"
        )));
        for not in [
            " > rm -rf build",
            "  shell mode enabled (esc to disable)\n !   Type your shell command",
            " ! echo hi",
        ] {
            assert!(!prompt_ready(&screen(not)), "{not}");
        }
        assert!(!prompt_ready("no prompt on this screen"));
    }

    #[test]
    fn a_cancelled_request_in_the_transcript_ends_the_dialog() {
        assert!(transcript_line_ends_dialog(
            r#"{"id":"x","timestamp":"t","type":"info","content":"Request cancelled."}"#
        ));
        for line in [
            r#"{"type":"info","content":"Switched model."}"#,
            r#"{"type":"gemini","content":"Request cancelled."}"#,
            "not json",
        ] {
            assert!(!transcript_line_ends_dialog(line), "{line}");
        }
    }

    #[test]
    fn a_run_for_one_prompt_is_told_by_its_prompt_option() {
        for own in [
            &["-p", "hi"][..],
            &["--prompt", "hi"],
            &["--prompt=hi"],
            &["-m", "x", "-p", "hi"],
        ] {
            assert!((DESCRIPTION.one_shot)(own), "{own:?}");
        }
        for own in [&[][..], &["-i", "hi"], &["hello"], &["--resume", "latest"]] {
            assert!(!(DESCRIPTION.one_shot)(own), "{own:?}");
        }
    }
}
