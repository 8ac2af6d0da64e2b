//! The events that our OpenCode and Hermes plugins write on the
//! reporter's stdin.
//!
//! Those CLIs load plugins instead of running shell hooks. A plugin only picks
//! the events that matter and passes the CLI's own fields on; every rule about
//! what a person reads (the question test, the reply tail, option limits, how
//! a permission or a clarify dialog is worded) lives here, in one language.
//! Version 1, one JSON object:
//!
//! | `event`      | other fields                                   | means                       |
//! | ------------ | ---------------------------------------------- | --------------------------- |
//! | `dialog`     | `questions`: OpenCode's `question.asked` list `[{question, header?, options?: [{label, description?}]}]`, or `clarify`: Hermes's clarify arguments as the tool got them (`{question, choices}` or `{questions: [...]}`) | a question dialog opened |
//! | `permission` | `request`: OpenCode's `permission.asked` (or older `permission.updated`) properties, or `approval`: Hermes's `{command, description}`; older plugins send `text` | an approval dialog opened |
//! | `turn_end`   | `text`: the agent's last reply                 | a reply ended: a question opens, anything else closes (`round_end`) |
//! | `close`      | `reason`: one of the report's close reasons; or `clarify_result`: Hermes's clarify result, or `approval_choice`: Hermes's approval choice | the dialog closed |
//!
//! Every event also has `session` (the CLI's session id) and may have `v` (1).

use serde_json::{json, Value};

use super::event::{
    close, command_with_description, dialog, dialog_questions, ignore, round_end, str_field,
    with_why_too_large, Decision, Takeable,
};
use crate::afar::{Afar, AnswerBody, Verdict};
use crate::agent::{self, Description};
use crate::lasting::opencode_always;
use crate::report::{Cli, CloseReason, Kind};
use crate::request;
use crate::text;

/// OpenCode, as the project knows it ([`crate::agent`]): our plugin sends
/// its events, and each of its dialogs ends in one.
pub const OPENCODE: Description = Description {
    name: "OpenCode",
    programs: &["opencode"],
    one_shot: |own| agent::first_word(own) == Some("run"),
    hooks: &[],
    hook_timeout_s: agent::HOOK_TIMEOUT_S,
    timeouts_in_ms: false,
    classify: |event| (classify(Cli::Opencode, event), takeable(event)),
    transcript_watched: agent::never,
    transcript_line_ends_dialog: agent::never,
    reply_in_transcript: None,
    prompt_ready: Some(super::opencode_prompt::prompt_ready),
    hooks_lose_credential: false,
    plugin_root: None,
    why_not: agent::no_more_to_say,
};

/// Hermes, as the project knows it ([`crate::agent`]): our plugin sends its
/// events; its prompts take answers only at its terminal.
pub const HERMES: Description = Description {
    name: "Hermes",
    programs: &["hermes", "hermes-agent"],
    one_shot: |own| own.iter().any(|a| matches!(*a, "-q" | "--query")),
    hooks: &[],
    hook_timeout_s: agent::HOOK_TIMEOUT_S,
    timeouts_in_ms: false,
    classify: |event| (classify(Cli::Hermes, event), takeable(event)),
    transcript_watched: agent::never,
    transcript_line_ends_dialog: agent::never,
    reply_in_transcript: None,
    prompt_ready: Some(agent::prompt_alone_between_rules),
    hooks_lose_credential: false,
    plugin_root: None,
    why_not: |_| "Hermes takes its answer only at its terminal prompt",
};

/// The version of the normalized format that this crate reads.
pub const VERSION: u64 = 1;

pub(super) fn classify(cli: Cli, event: &Value) -> Decision {
    if let Some(v) = event.get("v").and_then(Value::as_u64) {
        if v > VERSION {
            return ignore(format!(
                "normalized event version {v} is newer than {VERSION}"
            ));
        }
    }
    match str_field(event, "event").unwrap_or("") {
        "dialog" => match event.get("clarify") {
            Some(args) => dialog(
                Some(&clarify_questions(args)),
                "Hermes is asking a question",
            ),
            None => dialog(event.get("questions"), "The agent is asking a question"),
        },
        "permission" => Decision::Open {
            kind: Kind::Permission,
            text: permission_text(cli, event),
            options: Vec::new(),
        },
        "turn_end" => round_end(str_field(event, "text")),
        "close" => match str_field(event, "reason") {
            Some(r) => match CloseReason::parse(r) {
                Some(reason) => close(reason),
                None => ignore(format!("unknown close reason {r:?}")),
            },
            None => close(hermes_close_reason(event)),
        },
        "" => ignore("no `event` field"),
        other => ignore(format!("unknown normalized event {other:?}")),
    }
}

/// What of this event a plugin that says it can take answers (`afar: true`,
/// OpenCode's, which replies through OpenCode's own client) may be given: a
/// permission's decision, a dialog's choices. The digest is of the CLI's own
/// request (`request`, `questions`), which the plugin hands `report-prompt
/// __await` again, so both ends compute it here.
pub(super) fn takeable(event: &Value) -> Option<Takeable> {
    if event.get("afar").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    match str_field(event, "event")? {
        "dialog" => {
            let questions = event.get("questions")?;
            Takeable::new(
                Afar::Choices,
                OPENCODE_QUESTION,
                questions,
                dialog_questions(Some(questions), true),
            )
        }
        "permission" => Takeable::new(
            Afar::Decision,
            OPENCODE_PERMISSION,
            event.get("request")?,
            Vec::new(),
        ),
        _ => None,
    }
}

/// Why a Hermes dialog closed: Hermes reports a cancelled or timed-out
/// clarify as a result whose answer is its own sentence, and an approval that
/// timed out as the choice `timeout`. Ctrl-C on an approval reads as `deny`,
/// like a real denial, and so counts as an answer.
fn hermes_close_reason(event: &Value) -> CloseReason {
    const NOT_ANSWERED: &[&str] = &[
        "The user cancelled",
        "The user did not provide a response",
        "[user did not respond",
        "[clarify prompt could not be delivered",
    ];
    if let Some(result) = str_field(event, "clarify_result") {
        let answer = serde_json::from_str::<Value>(result)
            .ok()
            .and_then(|r| {
                r.get("user_response")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        if NOT_ANSWERED
            .iter()
            .any(|p| answer.trim_start().starts_with(p))
        {
            return CloseReason::Interrupted;
        }
    }
    match str_field(event, "approval_choice") {
        Some("timeout") => CloseReason::Interrupted,
        _ => CloseReason::Answered,
    }
}

/// What an approval dialog asks, in the words of the CLI that shows it.
fn permission_text(cli: Cli, event: &Value) -> String {
    let non_empty = |s: Option<&str>| s.filter(|t| !t.is_empty()).map(str::to_owned);
    if let Some(req) = event.get("request") {
        let request = request::Request::new(OPENCODE_PERMISSION, req);
        return with_why_too_large(&request, text::visible(&opencode_request_text(req)));
    }
    if let Some(a) = event.get("approval") {
        let command = str_field(a, "command").filter(|c| !c.is_empty());
        return command_with_description(command, str_field(a, "description"))
            .or_else(|| command.map(|c| format!("$ {c}")))
            .unwrap_or_else(|| "Hermes needs your approval".to_owned());
    }
    non_empty(str_field(event, "text")).unwrap_or_else(|| match cli {
        Cli::Hermes => "Hermes needs your approval".to_owned(),
        _ => "The agent needs your permission".to_owned(),
    })
}

/// OpenCode's reply to its permission `request` for `answer`: `once` for
/// allow, `reject` (with the person's message) for deny, `always` for the
/// lasting choice its own request offers; `None` for anything else.
pub fn opencode_reply(answer: &AnswerBody, request: &crate::request::Request) -> Option<Value> {
    let AnswerBody::Decision { decision, message } = answer else {
        return None;
    };
    Some(match decision {
        Verdict::Allow => json!({"reply": "once"}),
        Verdict::Deny => match message {
            Some(m) => json!({"reply": "reject", "message": m}),
            None => json!({"reply": "reject"}),
        },
        Verdict::Lasting(id) => {
            let own = opencode_always(&request.input)?;
            (crate::afar::lasting_id(&own) == *id).then(|| json!({"reply": "always"}))?
        }
    })
}

/// The tool names under which OpenCode's requests are digested.
pub use crate::request::OPENCODE_PERMISSION;
const OPENCODE_QUESTION: &str = "opencode.question";

/// Fields of OpenCode's permission request that change nothing of what
/// allowing it once runs: those that name it (its id, its session, message
/// and call, its time) and `always`, the patterns that OpenCode's own
/// "always" would allow from then on, which its lasting choice shows
/// (`crate::lasting`). Bound by the digest, left off the card's text.
const OPENCODE_UNSHOWN: &[&str] = &[
    "id",
    "sessionID",
    "messageID",
    "callID",
    "tool",
    "time",
    "always",
];

/// OpenCode's permission request as its card shows it: [`opencode_permission`]'s
/// line, then every field of the request and its `metadata` that the line
/// did not show, but for [`OPENCODE_UNSHOWN`].
pub(super) fn opencode_request_text(req: &Value) -> String {
    let head = opencode_permission(req);
    let mut rest = req.as_object().cloned().unwrap_or_default();
    for k in OPENCODE_UNSHOWN {
        rest.remove(*k);
    }
    let titled = str_field(req, "title").is_some_and(|t| !t.is_empty());
    if titled {
        rest.remove("title");
    }
    let what = ["permission", "type"]
        .into_iter()
        .find(|k| str_field(req, k).is_some());
    if let Some(k) = what.filter(|_| !titled) {
        rest.remove(k);
    }
    let mut meta = match rest.remove("metadata") {
        Some(Value::Object(m)) => m,
        Some(other) => serde_json::Map::from_iter([("metadata".to_owned(), other)]),
        None => serde_json::Map::new(),
    };
    let command = str_field(req.get("metadata").unwrap_or(&Value::Null), "command")
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    if !titled {
        match &command {
            Some(c) => {
                meta.remove("command");
                // Patterns that are the command itself say nothing more.
                for k in ["patterns", "pattern"] {
                    let same = match rest.get(k) {
                        Some(Value::Array(p)) => p.iter().all(|p| p.as_str() == Some(c)),
                        Some(Value::String(p)) => p == c,
                        _ => false,
                    };
                    if same {
                        rest.remove(k);
                    }
                }
            }
            None => {
                // Only the patterns the line showed: the first of the two
                // names, when every pattern is a string.
                let shown = ["patterns", "pattern"]
                    .into_iter()
                    .find(|k| req.get(*k).is_some());
                if let Some(k) = shown {
                    let all_strings = match req.get(k) {
                        Some(Value::Array(p)) => p.iter().all(Value::is_string),
                        Some(Value::String(_)) => true,
                        _ => false,
                    };
                    if all_strings {
                        rest.remove(k);
                    }
                }
            }
        }
    }
    // A metadata field never hides a field of the request of the same name.
    for (k, v) in meta {
        let name = if rest.contains_key(&k) {
            format!("metadata.{k}")
        } else {
            k
        };
        rest.insert(name, v);
    }
    request::with_rest(head, &rest)
}

/// OpenCode's permission request: its title when it has one (the older
/// `permission.updated`), else the permission and its command or patterns.
fn opencode_permission(req: &Value) -> String {
    if let Some(title) = str_field(req, "title").filter(|t| !t.is_empty()) {
        return title.to_owned();
    }
    let what = str_field(req, "permission")
        .or_else(|| str_field(req, "type"))
        .unwrap_or("a tool");
    if let Some(command) = req
        .get("metadata")
        .and_then(|m| str_field(m, "command"))
        .filter(|c| !c.is_empty())
    {
        return format!("{what}: {command}");
    }
    let patterns: Vec<&str> = match req.get("patterns").or_else(|| req.get("pattern")) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        Some(Value::String(s)) => vec![s.as_str()],
        _ => Vec::new(),
    };
    let patterns: Vec<&str> = patterns.into_iter().filter(|p| !p.is_empty()).collect();
    if patterns.is_empty() {
        format!("OpenCode asks to use {what}")
    } else {
        format!("{what}: {}", patterns.join(", "))
    }
}

/// Hermes's clarify arguments as the shared question list: the single form
/// `{question, choices}` or the batch form `{questions: [...]}`, whose items
/// may be plain strings; a batch item's `id` heads its options.
fn clarify_questions(args: &Value) -> Value {
    let items: Vec<&Value> = match args.get("questions") {
        _ if !args.is_object() => Vec::new(),
        Some(Value::Array(list)) if !list.is_empty() => list.iter().collect(),
        _ => vec![args],
    };
    let questions: Vec<Value> = items
        .into_iter()
        .filter_map(|item| {
            let (text, choices, id) = match item {
                Value::String(s) => (s.as_str(), None, None),
                Value::Object(_) => (
                    str_field(item, "question").unwrap_or(""),
                    item.get("choices").and_then(Value::as_array),
                    str_field(item, "id").filter(|i| !i.is_empty()),
                ),
                _ => return None,
            };
            let options: Vec<Value> = choices
                .into_iter()
                .flatten()
                .filter_map(choice_label)
                .map(|label| json!({ "label": label }))
                .collect();
            let mut q = json!({"question": text.trim(), "options": options});
            if let Some(id) = id {
                q["header"] = json!(id);
            }
            Some(q)
        })
        .collect();
    Value::Array(questions)
}

/// A clarify choice as Hermes shows it: a string, or an object's label,
/// description, text or title, whichever comes first.
fn choice_label(choice: &Value) -> Option<String> {
    let label = match choice {
        Value::String(s) => Some(s.as_str()),
        Value::Object(_) => ["label", "description", "text", "title"]
            .iter()
            .find_map(|k| str_field(choice, k).filter(|v| !v.trim().is_empty())),
        _ => None,
    };
    label
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
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

    fn open_text(cli: Cli, v: serde_json::Value) -> (String, Vec<String>) {
        match run(cli, &v).decision {
            Decision::Open { text, options, .. } => {
                (text, options.into_iter().map(|o| o.label).collect())
            }
            d => panic!("not an open: {d:?}"),
        }
    }

    #[test]
    fn opencode_permissions_are_worded_from_the_request() {
        let perm = |req: serde_json::Value| {
            open_text(
                Cli::Opencode,
                json!({"session": "ses_1", "event": "permission", "request": req}),
            )
            .0
        };
        assert_eq!(
            perm(
                json!({"permission": "bash", "patterns": ["git push origin main"],
                        "metadata": {"command": "git push origin main"}})
            ),
            "bash: git push origin main"
        );
        assert_eq!(
            perm(json!({"type": "bash", "pattern": ["rm -rf *"], "title": "rm -rf build"})),
            "rm -rf build\n\npattern: [\"rm -rf *\"]\ntype: bash",
            "a title never hides what the request allows"
        );
        assert_eq!(
            perm(json!({"permission": "edit", "patterns": ["src/a.rs", "src/b.rs"]})),
            "edit: src/a.rs, src/b.rs"
        );
        assert_eq!(
            perm(json!({"permission": "webfetch"})),
            "OpenCode asks to use webfetch"
        );
        assert_eq!(perm(json!({})), "OpenCode asks to use a tool");
        assert_eq!(
            perm(
                json!({"id": "per_1", "sessionID": "ses_1", "permission": "bash",
                        "patterns": ["rm -rf build"], "always": ["rm *"],
                        "metadata": {"command": "echo harmless", "description": "clean"},
                        "tool": {"messageID": "m", "callID": "c"}})
            ),
            "bash: echo harmless\n\ndescription: clean\npatterns: [\"rm -rf build\"]",
            "patterns that differ from the command are shown; identifiers and `always` are not"
        );
    }

    #[test]
    fn hermes_approvals_and_older_plugins_text() {
        let perm = |cli, fields: serde_json::Value| {
            let mut v = json!({"session": "ses_1", "event": "permission"});
            v.as_object_mut()
                .unwrap()
                .extend(fields.as_object().unwrap().clone());
            open_text(cli, v).0
        };
        let approval = |a| perm(Cli::Hermes, json!({ "approval": a }));
        assert_eq!(
            approval(json!({"command": "rm -rf build/", "description": "recursive delete"})),
            "recursive delete\n$ rm -rf build/"
        );
        assert_eq!(approval(json!({"command": "ls"})), "$ ls");
        assert_eq!(approval(json!({"description": "delete"})), "delete");
        assert_eq!(approval(json!({})), "Hermes needs your approval");
        assert_eq!(
            perm(Cli::Opencode, json!({"text": "Run it"})),
            "Run it",
            "a plugin of an earlier version sends its own text"
        );
    }

    #[test]
    fn hermes_clarify_single_and_batch_forms() {
        let clarify = |args| {
            open_text(
                Cli::Hermes,
                json!({"session": "ses_1", "event": "dialog", "clarify": args}),
            )
        };
        assert_eq!(
            clarify(json!({"question": " Which auth? ",
                "choices": ["OAuth (GitHub)", {"label": "Email + password"}, {"text": "SSO"}, "", 3]})),
            (
                "Which auth?".to_owned(),
                vec![
                    "OAuth (GitHub)".into(),
                    "Email + password".into(),
                    "SSO".into()
                ]
            )
        );
        assert_eq!(
            clarify(json!({"question": "Setup", "questions": [
                {"id": "auth", "question": "Which auth?", "choices": ["OAuth", "Password"]},
                {"question": "Deadline?"}, "Budget?"]})),
            (
                "Which auth?\nDeadline?\nBudget?".to_owned(),
                vec!["auth: OAuth".into(), "auth: Password".into()]
            )
        );
        assert_eq!(clarify(json!("garbage")).0, "Hermes is asking a question");
    }

    #[test]
    fn hermes_closes_tell_an_answer_from_a_cancel_or_a_time_out() {
        let reason = |fields: serde_json::Value| {
            let mut v = json!({"session": "ses_1", "event": "close"});
            v.as_object_mut()
                .unwrap()
                .extend(fields.as_object().unwrap().clone());
            match run(Cli::Hermes, &v).decision {
                Decision::Close { reason } => reason,
                d => panic!("{d:?}"),
            }
        };
        let result = |answer: &str| json!({"clarify_result": json!({"question": "q", "choices_offered": [], "user_response": answer}).to_string()});
        assert_eq!(reason(result("OAuth")), CloseReason::Answered);
        assert_eq!(
            reason(result(
                "The user cancelled. Use your best judgement to proceed."
            )),
            CloseReason::Interrupted
        );
        assert_eq!(
            reason(result(
                "The user did not provide a response within the time limit."
            )),
            CloseReason::Interrupted
        );
        assert_eq!(
            reason(result("[user did not respond within 5m]")),
            CloseReason::Interrupted
        );
        assert_eq!(
            reason(json!({"clarify_result": "not json"})),
            CloseReason::Answered
        );
        assert_eq!(
            reason(json!({"approval_choice": "timeout"})),
            CloseReason::Interrupted
        );
        assert_eq!(
            reason(json!({"approval_choice": "deny"})),
            CloseReason::Answered
        );
        assert_eq!(
            reason(json!({"approval_choice": "once"})),
            CloseReason::Answered
        );
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
