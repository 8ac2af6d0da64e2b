//! The payloads that the real Claude Code, Codex, Copilot CLI and Gemini CLI sent to our
//! hooks (and Codex's app-server to its clients, and Copilot to its session's
//! transcript) in a live run (`tests/live/`,
//! recorded with `NEEDS_YOU_RECORD_FIXTURES=1`), classified as the reporter
//! classifies them. A CLI version that changes a
//! shape we rely on fails here.

use std::path::Path;

use needs_you_core::classify::{classify, Decision};
use needs_you_core::{Cli, CloseReason, Kind};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn decide(cli: Cli, name: &str) -> Decision {
    let c = classify(cli, &fixture(name));
    assert!(c.session.is_some(), "{name}: no session id");
    c.decision
}

fn opens(d: &Decision) -> Option<Kind> {
    match d {
        Decision::Open { kind, .. } => Some(*kind),
        _ => None,
    }
}

fn closes(d: &Decision) -> Option<CloseReason> {
    match d {
        Decision::Close { reason } => Some(*reason),
        _ => None,
    }
}

#[test]
fn claude_code_as_it_really_is() {
    let cli = Cli::ClaudeCode;
    let ask = decide(cli, "claude-code.PreToolUse.json");
    assert_eq!(opens(&ask), Some(Kind::Dialog));
    let Decision::Open { options, .. } = &ask else {
        unreachable!()
    };
    assert!(!options.is_empty(), "AskUserQuestion's options: {ask:?}");
    assert!(matches!(
        decide(cli, "claude-code.PermissionRequest.json"),
        Decision::Expect {
            kind: Kind::Permission,
            ..
        }
    ));
    assert_eq!(
        opens(&decide(cli, "claude-code.Notification.json")),
        Some(Kind::Permission)
    );
    assert!(closes(&decide(cli, "claude-code.PostToolUse.json")).is_some());
    assert_eq!(
        closes(&decide(cli, "claude-code.UserPromptSubmit.json")),
        Some(CloseReason::PromptSubmitted)
    );
    assert_eq!(
        closes(&decide(cli, "claude-code.SessionEnd.json")),
        Some(CloseReason::SessionEnd)
    );
    let stop = decide(cli, "claude-code.Stop.json");
    assert!(opens(&stop) == Some(Kind::Reply) || closes(&stop) == Some(CloseReason::RoundEnd));
    // An MCP server's form (the live suite's tests/live/mcp-asker.js).
    let form = decide(cli, "claude-code.Elicitation.json");
    let Decision::Open {
        kind: Kind::Dialog,
        text,
        options,
    } = &form
    else {
        panic!("an MCP form is a dialog: {form:?}")
    };
    assert!(text.starts_with("Which environment"), "{text}");
    assert_eq!(options.len(), 2, "its choices: {form:?}");
    assert_eq!(
        closes(&decide(cli, "claude-code.ElicitationResult.json")),
        Some(CloseReason::Answered)
    );
}

#[test]
fn codex_as_it_really_is() {
    let cli = Cli::Codex;
    let permission = decide(cli, "codex.PermissionRequest.json");
    assert_eq!(opens(&permission), Some(Kind::Permission));
    let Decision::Open { text, .. } = &permission else {
        unreachable!()
    };
    assert!(text.contains("rm -rf"), "the command: {text}");
    assert_eq!(
        closes(&decide(cli, "codex.Interrupt.json")),
        Some(CloseReason::Interrupted)
    );
    assert_eq!(
        closes(&decide(cli, "codex.SessionEnd.json")),
        Some(CloseReason::SessionEnd)
    );
    let stop = decide(cli, "codex.Stop.json");
    assert!(opens(&stop) == Some(Kind::Reply) || closes(&stop) == Some(CloseReason::RoundEnd));
}

#[test]
fn codex_s_app_server_question_as_it_really_is() {
    use needs_you_core::afar::Afar;
    use needs_you_core::classify::codex_app;
    let sent = fixture("codex.app_item_tool_requestUserInput.json");
    let method = sent["method"].as_str().unwrap();
    let asked = codex_app::asked(method, &sent["params"], None).expect("a question");
    assert_eq!(asked.kind, Kind::Dialog);
    let takeable = asked.takeable().expect("answerable from afar");
    assert_eq!(takeable.takes.takes, Afar::Choices);
    let q = &takeable.questions[0];
    assert_eq!(q.question, "Which database?");
    assert!(
        q.other,
        "the TUI's \"None of the above\" takes a typed answer"
    );
    assert_eq!(q.options.len(), 2);
    let chosen = needs_you_core::afar::AnswerBody::Choices {
        choices: vec![vec!["Postgres".into()]],
    };
    let answer = codex_app::response(method, &sent["params"], &chosen).unwrap();
    let id = sent["params"]["questions"][0]["id"].as_str().unwrap();
    assert_eq!(answer["answers"][id]["answers"][0], "Postgres");
}

#[test]
fn codex_s_app_server_permissions_request_as_it_really_is() {
    use needs_you_core::afar::{AnswerBody, Verdict};
    use needs_you_core::classify::codex_app;
    let sent = fixture("codex.app_item_permissions_requestApproval.json");
    let method = sent["method"].as_str().unwrap();
    let asked = codex_app::asked(method, &sent["params"], None).expect("a permission");
    assert_eq!(asked.kind, Kind::Permission);
    assert_eq!(
        asked.text(),
        "Codex asks for more permissions:\n\
         - write: /var/tmp/needs-you-live-codex-0StZ01\n\
         - the network\n\
         in /tmp/needs-you-live-codex-AhVK3a/work\n\
         Why: to write the build\n\nenvironmentId: local"
    );
    let allow = AnswerBody::Decision {
        decision: Verdict::Allow,
        message: None,
    };
    let granted = codex_app::response(method, &sent["params"], &allow).unwrap();
    assert_eq!(granted["permissions"], sent["params"]["permissions"]);
    assert_eq!(granted["scope"], "turn");
}

#[test]
fn codex_s_app_server_mcp_tool_call_approval_and_server_form_as_they_really_are() {
    use needs_you_core::afar::{AnswerBody, Verdict};
    use needs_you_core::classify::codex_app;
    // Codex's own approval of the tool call, asked as an elicitation.
    let sent = fixture("codex.app_mcpServer_elicitation_request.json");
    let method = sent["method"].as_str().unwrap();
    let asked = codex_app::asked(method, &sent["params"], None).expect("a permission");
    assert_eq!(asked.kind, Kind::Permission);
    assert_eq!(
        asked.text(),
        "Codex wants to run the tool choose_environment of the MCP server asker, with no arguments\n\
         Asks the person which environment to deploy to."
    );
    let allow = AnswerBody::Decision {
        decision: Verdict::Allow,
        message: None,
    };
    let accepted = codex_app::response(method, &sent["params"], &allow).unwrap();
    assert_eq!(accepted["action"], "accept");
    // The server's own form, passed on: its field a question with its values.
    let form = fixture("codex.app_mcpServer_elicitation_request_form.json");
    let asked = codex_app::asked(method, &form["params"], None).expect("a dialog");
    assert_eq!(asked.kind, Kind::Dialog);
    let takeable = asked.takeable().expect("answered from afar");
    let labels: Vec<&str> = takeable.questions[0]
        .options
        .iter()
        .map(|o| o.label.as_str())
        .collect();
    assert_eq!(labels, ["staging", "production"]);
    let chosen = AnswerBody::Choices {
        choices: vec![vec!["staging".into()]],
    };
    let answer = codex_app::response(method, &form["params"], &chosen).unwrap();
    assert_eq!(
        answer,
        serde_json::json!({"action": "accept", "content": {"environment": "staging"}})
    );
    // The tool call's approval takes no choices, the form no decision.
    assert_eq!(codex_app::response(method, &form["params"], &allow), None);
    assert_eq!(codex_app::response(method, &sent["params"], &chosen), None);
}

#[test]
fn copilot_as_it_really_is() {
    let cli = Cli::Copilot;
    let permission = decide(cli, "copilot.Notification_permission_prompt.json");
    assert_eq!(opens(&permission), Some(Kind::Permission));
    let Decision::Open { text, .. } = &permission else {
        unreachable!()
    };
    assert!(
        text.starts_with("Run command: touch "),
        "the command: {text}"
    );
    // The question's form announces itself too; its PreToolUse opens it.
    assert!(matches!(
        decide(cli, "copilot.Notification.json"),
        Decision::Ignore { .. }
    ));
    let ask = decide(cli, "copilot.PreToolUse.json");
    let Decision::Open { kind, options, .. } = &ask else {
        panic!("the question: {ask:?}")
    };
    assert_eq!(*kind, Kind::Dialog);
    let labels: Vec<&str> = options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["red", "blue"]);
    assert!(closes(&decide(cli, "copilot.PostToolUse.json")).is_some());
}

#[test]
fn copilot_s_transcript_says_how_a_permission_ended() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/copilot.events.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let ends = Cli::Copilot.describe().transcript_line_ends_dialog;
    let lines: Vec<&str> = text.lines().collect();
    let approved: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("\"approved\""))
        .collect();
    assert!(
        !approved.is_empty() && approved.iter().all(|l| !ends(l)),
        "{text}"
    );
    // Esc: the permission is cancelled, then the round aborted.
    assert!(
        lines.iter().any(|l| l.contains("\"cancelled\"") && ends(l)),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("{\"type\":\"abort\"") && ends(l)),
        "{text}"
    );
}

#[test]
fn gemini_as_it_really_is() {
    let cli = Cli::Gemini;
    let permission = decide(cli, "gemini.Notification_ToolPermission.json");
    let Decision::Open { kind, text, .. } = &permission else {
        panic!("the permission: {permission:?}")
    };
    assert_eq!(*kind, Kind::Permission);
    assert!(
        text.starts_with("Confirm Shell Command\n$ touch "),
        "the command: {text}"
    );
    // The question's dialog announces itself too; its BeforeTool opens it.
    assert!(matches!(
        decide(cli, "gemini.Notification.json"),
        Decision::Ignore { .. }
    ));
    let ask = decide(cli, "gemini.BeforeTool.json");
    let Decision::Open { kind, options, .. } = &ask else {
        panic!("the question: {ask:?}")
    };
    assert_eq!(*kind, Kind::Dialog);
    let labels: Vec<&str> = options.iter().map(|o| o.label.as_str()).collect();
    assert_eq!(labels, ["Red", "Blue"]);
    assert_eq!(
        closes(&decide(cli, "gemini.AfterTool.json")),
        Some(CloseReason::Answered)
    );
    assert_eq!(
        opens(&decide(cli, "gemini.AfterAgent.json")),
        Some(Kind::Reply)
    );
    assert_eq!(
        closes(&decide(cli, "gemini.BeforeAgent.json")),
        Some(CloseReason::PromptSubmitted)
    );
    assert_eq!(
        closes(&decide(cli, "gemini.SessionEnd.json")),
        Some(CloseReason::SessionEnd)
    );
}
