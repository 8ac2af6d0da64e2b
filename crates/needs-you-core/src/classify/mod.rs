//! Which hook event opens a question, closes it, or means nothing.
//!
//! One module per CLI, each a direct reading of the hook table in
//! `docs/hooks.md`, so the reporter (and one day the Worker, for raw payloads)
//! apply the same rules. The input is the JSON that the CLI's hook (Claude
//! Code, Codex) or our plugin (OpenCode, Hermes, see [`normalized`]) writes on
//! the reporter's stdin. Beside each classifier stands the list of hook events
//! that `report-prompt install` adds for that CLI ([`hooks`]), so what is
//! installed and what it means are read in one file.

pub mod card;
mod claude_code;
mod codex;
pub mod codex_app;
mod copilot;
mod elicitation;
mod gemini;
pub mod normalized;
mod opencode_prompt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::afar::{self, Afar, DialogQuestion, Takes};
use crate::request::Request;

use crate::question::{ends_with_question, reply_tail};
use crate::report::{
    truncate_chars, Cli, CloseReason, Kind, QuestionOption, Report, MAX_LABEL_CHARS, MAX_OPTIONS,
};

/// What an event means for the person's "Needs you" list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "lowercase")]
pub enum Decision {
    /// The agent now waits for its person.
    Open {
        kind: Kind,
        text: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        options: Vec<QuestionOption>,
    },
    /// The person answered, or the question went away.
    Close { reason: CloseReason },
    /// A dialog is up, but the CLI will say later whether it stays up long
    /// enough to matter (Claude Code's `PermissionRequest`, confirmed by its
    /// `permission_prompt` six seconds on): remember what it asks, report
    /// nothing yet.
    Expect { kind: Kind, text: String },
    /// Nothing to report; `why` says which rule decided, for `classify`.
    Ignore { why: String },
}

impl Decision {
    /// The report this decision makes for `session`, numbered `seq`; `None`
    /// for an ignored or expected event, which is never reported.
    pub fn into_report(self, cli: Cli, session: String, seq: u64) -> Option<Report> {
        match self {
            Decision::Open {
                kind,
                text,
                options,
            } => Some(Report::Open {
                cli,
                session,
                seq,
                kind,
                text,
                options,
                terminal: None,
                takes: None,
                questions: Vec::new(),
                request: None,
            }),
            Decision::Close { reason } => Some(Report::Close {
                cli,
                session,
                seq,
                reason,
            }),
            Decision::Expect { .. } | Decision::Ignore { .. } => None,
        }
    }
}

/// A decision together with the session it belongs to, and what of it the
/// agent's machine can take from afar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Classified {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(flatten)]
    pub decision: Decision,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub takeable: Option<Takeable>,
    /// The subagent whose event it is (Claude Code's `agent_id`); none: the
    /// person's own agent. What a subagent opens, only it closes by its tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// A dialog or permission that this CLI lets a hook or plugin answer: what
/// it takes, the request itself (which the report carries, for the Worker to
/// build the card from), the digest that binds an answer to it, and a
/// dialog's questions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Takeable {
    #[serde(flatten)]
    pub takes: Takes,
    pub request: Request,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<DialogQuestion>,
}

impl Takeable {
    /// `None` for a request too large to carry whole, or a dialog larger than
    /// a card shows whole: it is answered in the terminal ([`Request::fits`],
    /// [`card::dialog_fits`]).
    fn new(
        takes: Afar,
        tool: &str,
        input: &Value,
        questions: Vec<DialogQuestion>,
    ) -> Option<Takeable> {
        Takeable::with_lasting(takes, Request::new(tool, input), questions)
    }

    /// The same, for a request that carries its CLI's lasting choices.
    pub(crate) fn with_lasting(
        takes: Afar,
        request: Request,
        questions: Vec<DialogQuestion>,
    ) -> Option<Takeable> {
        let whole = request.fits() && (takes != Afar::Choices || card::dialog_fits(&request));
        whole.then(|| Takeable {
            takes: Takes {
                takes,
                digest: request.digest(),
            },
            request,
            questions,
        })
    }
}

/// A dialog request's list of questions, where its tool keeps them: Claude
/// Code's `AskUserQuestion` in `questions` of its input, OpenCode's request
/// is the list itself.
fn request_questions<'a>(tool: &str, input: &'a Value) -> Option<&'a Value> {
    match tool {
        claude_code::ASK_TOOL => input.get("questions"),
        _ => Some(input),
    }
}

/// A permission request's card text, in the words of the CLI whose tool it
/// is, with everything its input holds. Chosen by the tool's own name, never
/// by what the report says of itself: the request is what the digest binds.
fn request_text(tool: &str, input: &Value) -> String {
    match tool {
        normalized::OPENCODE_PERMISSION => normalized::opencode_request_text(input),
        codex_app::COMMAND_TOOL
        | codex_app::FILE_CHANGE_TOOL
        | codex_app::PERMISSIONS_TOOL
        | codex_app::MCP_TOOL_CALL_TOOL => codex_app::request_text(tool, input),
        _ => claude_code::request_text(tool, input),
    }
}

/// Classifies one event of `cli`.
pub fn classify(cli: Cli, event: &Value) -> Classified {
    let (decision, takeable) = match event.as_object() {
        None => (ignore("the event is not a JSON object"), None),
        Some(_) => (cli.describe().classify)(event),
    };
    // Copilot's notification says `sessionId`.
    let session = ["session_id", "session", "sessionId"]
        .iter()
        .find_map(|k| event.get(k).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let agent = event
        .get("agent_id")
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
        .map(str::to_owned);
    Classified {
        session,
        decision,
        takeable,
        agent,
    }
}

/// Whether a dialog that `event` opens can end without a hook, so that its
/// transcript is watched (each CLI's [`crate::agent::Description`] says).
pub fn transcript_watched(cli: Cli, event: &Value) -> bool {
    (cli.describe().transcript_watched)(event)
}

/// Whether a line that `cli` appended to the transcript a dialog's event
/// named means that the dialog is gone without a hook (see each CLI's own).
pub fn transcript_line_ends_dialog(cli: Cli, line: &str) -> bool {
    (cli.describe().transcript_line_ends_dialog)(line)
}

/// Whether the agent was started for one prompt and no person (`claude -p`,
/// `codex exec`, `opencode run`, `hermes chat -q`): nobody can answer such a
/// run, so it reports nothing. `args` is the agent process's command line;
/// its own arguments are those after the program (an interpreter's before it
/// are skipped).
pub fn one_shot(cli: Cli, args: &[String]) -> bool {
    let program = |a: &String| Cli::of_program(a) == Some(cli);
    let Some(at) = args.iter().position(program) else {
        return false;
    };
    let own: Vec<&str> = args[at + 1..]
        .iter()
        .map(String::as_str)
        .take_while(|a| *a != "--")
        .collect();
    (cli.describe().one_shot)(&own)
}

/// Whether a close that an event of `agent` decided (none: the person's own
/// agent) ends the session's open question, opened by `opener`. A subagent
/// works beside its parent in the same session: whatever it does (a tool
/// run, its end, an interrupt, a form it cancelled) closes only what it
/// asked. The person's agent's tool run or round end is no answer to a
/// subagent's dialog either; what the person does (a prompt, the session's
/// end, an interrupt) ends any.
pub fn close_applies(reason: CloseReason, agent: Option<&str>, opener: Option<&str>) -> bool {
    match (agent, reason) {
        (Some(_), _) => agent == opener,
        (
            None,
            CloseReason::ToolRan
            | CloseReason::Answered
            | CloseReason::RoundEnd
            | CloseReason::Dismissed,
        ) => opener.is_none(),
        (None, _) => true,
    }
}

/// One hook event that `report-prompt install` adds to a CLI's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookSpec {
    pub event: &'static str,
    pub matcher: Option<&'static str>,
    /// Frequent closing events run behind the shell guard on the marker file:
    /// while nothing is open they cost one `test -e` and never start the
    /// reporter. So a guarded event must only ever close: an open behind the
    /// guard would never be seen while nothing else is open.
    pub guarded: bool,
    /// It may wait, while its dialog is on screen, for an answer from afar:
    /// its timeout must fit a person who answers minutes later.
    pub waits: bool,
}

pub(crate) const fn hook(
    event: &'static str,
    matcher: Option<&'static str>,
    guarded: bool,
) -> HookSpec {
    HookSpec {
        event,
        matcher,
        guarded,
        waits: false,
    }
}

/// A hook that may wait for an answer from afar (see [`HookSpec::waits`]).
pub(crate) const fn waiting_hook(event: &'static str) -> HookSpec {
    HookSpec {
        waits: true,
        ..hook(event, None, false)
    }
}

pub use claude_code::HOOKS as CLAUDE_CODE_HOOKS;
pub use claude_code::{
    hook_output as claude_code_hook_output, plan_text, transcript_plan_file,
    transcript_tool_events, ToolEvent, PLAN_TOOL,
};
pub use codex::HOOKS as CODEX_HOOKS;
pub use normalized::opencode_reply;

/// The hook events installed for `cli`: none for the CLIs that load plugins.
pub fn hooks(cli: Cli) -> &'static [HookSpec] {
    cli.describe().hooks
}

pub(crate) use claude_code::DESCRIPTION as CLAUDE_CODE;
pub(crate) use codex::DESCRIPTION as CODEX;
pub(crate) use copilot::DESCRIPTION as COPILOT;
pub(crate) use gemini::DESCRIPTION as GEMINI;
pub(crate) use normalized::{HERMES, OPENCODE};

/// What this machine knows of a session when an event arrives: the kind of
/// its open question, and what the last [`Decision::Expect`] said (and
/// could take from afar).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionState {
    pub open: Option<Kind>,
    pub expected: Option<String>,
    pub expected_takeable: Option<Takeable>,
    /// The subagent whose dialog was announced, if a subagent's was.
    pub expected_agent: Option<String>,
}

/// A decision in the light of what is already known of the session:
///
/// * a permission prompt while a question dialog is open is that dialog's own
///   (Claude Code fires `permission_prompt` for an `AskUserQuestion` left
///   open): the dialog stays, with its question and options;
/// * a permission prompt that an expectation announced says what it asks,
///   where the prompt itself only says that permission is needed.
pub fn settle(decision: Decision, state: &SessionState) -> Decision {
    match decision {
        Decision::Open {
            kind: Kind::Permission,
            ..
        } if state.open == Some(Kind::Dialog) => {
            ignore("a question dialog is open: the permission prompt is its own")
        }
        Decision::Open {
            kind: Kind::Permission,
            text,
            options,
        } => Decision::Open {
            kind: Kind::Permission,
            text: state.expected.clone().unwrap_or(text),
            options,
        },
        other => other,
    }
}

fn ignore(why: impl Into<String>) -> Decision {
    Decision::Ignore { why: why.into() }
}

fn close(reason: CloseReason) -> Decision {
    Decision::Close { reason }
}

fn str_field<'a>(event: &'a Value, field: &str) -> Option<&'a str> {
    event.get(field).and_then(Value::as_str)
}

/// A subagent's events carry `agent_id` (and its kind in `agent_type`).
fn is_subagent(event: &Value) -> bool {
    event.get("agent_id").is_some_and(|v| !v.is_null())
}

/// A subagent's dialog in the person's words: what it asks, and which agent
/// asks it, as the terminal says ("from the general-purpose agent").
fn from_agent(text: String, event: &Value) -> String {
    // Codex names an agent of no particular kind "default".
    match str_field(event, "agent_type").filter(|t| !t.is_empty() && *t != "default") {
        Some(kind) if is_subagent(event) => format!("{text}\n(from the {kind} agent)"),
        _ if is_subagent(event) => format!("{text}\n(from a subagent)"),
        _ => text,
    }
}

/// A permission's text from what it runs and why it runs it: the description,
/// then the command on its own line after `$ `; the description alone when
/// there is no command; `None` without a description, where each CLI words
/// its own fallback.
fn command_with_description(command: Option<&str>, description: Option<&str>) -> Option<String> {
    let command = command.filter(|c| !c.is_empty());
    match (command, description.filter(|d| !d.is_empty())) {
        (Some(c), Some(d)) => Some(format!("{d}\n$ {c}")),
        (None, Some(d)) => Some(d.to_owned()),
        (_, None) => None,
    }
}

/// The end of a round: a reply that ends with a question opens one, any other
/// reply closes what is open, since no dialog can still be open once the round ended.
fn round_end(reply: Option<&str>) -> Decision {
    match reply {
        Some(text) if ends_with_question(text) => Decision::Open {
            kind: Kind::Reply,
            text: reply_tail(text),
            options: Vec::new(),
        },
        _ => close(CloseReason::RoundEnd),
    }
}

/// A dialog's questions as asked, in the shape that Claude Code's
/// `AskUserQuestion` and OpenCode's `question.asked` share (`multiSelect` or
/// `multiple`; `custom`, OpenCode's, says whether a typed answer is taken,
/// where Claude Code always takes one); `other` is that default.
fn dialog_questions(questions: Option<&Value>, other: bool) -> Vec<DialogQuestion> {
    let items: Vec<&Value> = match questions {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(q @ Value::Object(_)) => vec![q],
        _ => Vec::new(),
    };
    items
        .into_iter()
        .take(afar::MAX_QUESTIONS)
        .map(|q| {
            let options = q
                .get("options")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|o| {
                    Some(QuestionOption {
                        label: truncate_chars(str_field(o, "label")?, MAX_LABEL_CHARS),
                        description: str_field(o, "description")
                            .filter(|d| !d.is_empty())
                            .map(str::to_owned),
                    })
                })
                .take(MAX_OPTIONS)
                .collect();
            let flag = |names: &[&str], default: bool| {
                names
                    .iter()
                    .find_map(|n| q.get(*n).and_then(Value::as_bool))
                    .unwrap_or(default)
            };
            DialogQuestion {
                question: str_field(q, "question").unwrap_or("").to_owned(),
                header: str_field(q, "header").unwrap_or("").to_owned(),
                options,
                multi_select: flag(&["multiSelect", "multiple", "multi_select"], false),
                other: flag(&["custom", "isOther"], other),
            }
        })
        .collect()
}

/// A question dialog from its list of questions, in the shape that Claude Code's
/// `AskUserQuestion` and our plugins share:
/// `[{"question": "…", "header": "…", "options": [{"label": "…", "description": "…"}]}]`.
///
/// The report has one text and one option list: the questions are joined by
/// new lines, and when there are several, each option's label is prefixed with
/// its question's header so the person can tell them apart.
fn dialog(questions: Option<&Value>, fallback: &str) -> Decision {
    let questions: Vec<&Value> = match questions {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(q @ Value::Object(_)) => vec![q],
        _ => Vec::new(),
    };
    let mut texts = Vec::new();
    let mut options = Vec::new();
    let several = questions.len() > 1;
    for q in &questions {
        let text = str_field(q, "question")
            .or_else(|| str_field(q, "text"))
            .unwrap_or("");
        if !text.is_empty() {
            texts.push(text.to_owned());
        }
        let header = str_field(q, "header").filter(|h| !h.is_empty());
        let items = q.get("options").or_else(|| q.get("choices"));
        for item in items.and_then(Value::as_array).into_iter().flatten() {
            let (label, description) = match item {
                Value::String(s) => (s.as_str(), None),
                other => match str_field(other, "label") {
                    Some(l) => (l, str_field(other, "description")),
                    None => continue,
                },
            };
            let label = match (several, header) {
                (true, Some(h)) => format!("{h}: {label}"),
                _ => label.to_owned(),
            };
            options.push(QuestionOption {
                label: truncate_chars(&label, MAX_LABEL_CHARS),
                description: description.filter(|d| !d.is_empty()).map(str::to_owned),
            });
        }
    }
    options.truncate(MAX_OPTIONS);
    let text = if texts.is_empty() {
        fallback.to_owned()
    } else {
        texts.join("\n")
    };
    Decision::Open {
        kind: Kind::Dialog,
        text,
        options,
    }
}

/// What the tests of one CLI's classifier read of a decision.
#[cfg(test)]
pub(crate) mod expect {
    use super::Decision;
    use crate::report::{CloseReason, Kind};

    /// The kind, text and option labels of a decision that opens.
    pub fn opened(d: Decision) -> (Kind, String, Vec<String>) {
        match d {
            Decision::Open {
                kind,
                text,
                options,
            } => (kind, text, options.into_iter().map(|o| o.label).collect()),
            other => panic!("{other:?}"),
        }
    }

    /// The reason of a decision that closes.
    pub fn closed(d: Decision) -> CloseReason {
        match d {
            Decision::Close { reason } => reason,
            other => panic!("{other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An event of `spec` as its CLI would send it, with the matcher filled in
    /// where the matcher names a tool or a notification type.
    fn sample(spec: &HookSpec, extra: Value) -> Value {
        let mut v = json!({"session_id": "s", "hook_event_name": spec.event});
        if let Some(m) = spec.matcher {
            let field = if spec.event == "Notification" {
                "notification_type"
            } else {
                "tool_name"
            };
            v[field] = json!(m);
        }
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    }

    #[test]
    fn every_installed_event_is_classified() {
        for cli in [Cli::ClaudeCode, Cli::Codex] {
            for spec in hooks(cli) {
                // SubagentStop is only ever a subagent's.
                let agent = match spec.event {
                    "SubagentStop" => json!("a1"),
                    _ => Value::Null,
                };
                let c = classify(
                    cli,
                    &sample(
                        spec,
                        json!({"tool_name": spec.matcher.unwrap_or("Bash"), "agent_id": agent}),
                    ),
                );
                assert!(
                    !matches!(c.decision, Decision::Ignore { .. }),
                    "{cli} {} is installed but ignored: {:?}",
                    spec.event,
                    c.decision
                );
            }
        }
    }

    #[test]
    fn guarded_events_only_ever_close() {
        let variants = [
            json!({}),
            json!({"tool_name": "AskUserQuestion", "tool_input": {"questions": [{"question": "Q?"}]}}),
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}),
            json!({"last_assistant_message": "Shall I go on?"}),
            json!({"notification_type": "permission_prompt", "message": "needs you"}),
        ];
        for cli in [Cli::ClaudeCode, Cli::Codex] {
            for spec in hooks(cli).iter().filter(|s| s.guarded) {
                for extra in &variants {
                    let c = classify(cli, &sample(spec, extra.clone()));
                    assert!(
                        !matches!(c.decision, Decision::Open { .. }),
                        "{cli} {} is guarded but opened: {extra}",
                        spec.event
                    );
                }
            }
        }
    }

    #[test]
    fn a_permission_prompt_never_replaces_an_open_dialog() {
        let prompt = Decision::Open {
            kind: Kind::Permission,
            text: "Claude needs your permission".into(),
            options: vec![],
        };
        let dialog_open = SessionState {
            open: Some(Kind::Dialog),
            expected: Some("AskUserQuestion".into()),
            ..SessionState::default()
        };
        assert!(matches!(
            settle(prompt.clone(), &dialog_open),
            Decision::Ignore { .. }
        ));
        let expected = SessionState {
            open: None,
            expected: Some("Remove the build folder\n$ rm -rf build".into()),
            ..SessionState::default()
        };
        assert_eq!(
            settle(prompt.clone(), &expected),
            Decision::Open {
                kind: Kind::Permission,
                text: "Remove the build folder\n$ rm -rf build".into(),
                options: vec![]
            }
        );
        assert_eq!(settle(prompt.clone(), &SessionState::default()), prompt);
        let close = Decision::Close {
            reason: CloseReason::ToolRan,
        };
        assert_eq!(settle(close.clone(), &dialog_open), close);
    }

    #[test]
    fn a_decision_becomes_its_report() {
        let open = Decision::Open {
            kind: Kind::Reply,
            text: "Go on?".into(),
            options: vec![],
        };
        assert_eq!(
            open.into_report(Cli::Codex, "s".into(), 7),
            Some(Report::Open {
                cli: Cli::Codex,
                session: "s".into(),
                seq: 7,
                kind: Kind::Reply,
                text: "Go on?".into(),
                options: vec![],
                terminal: None,
                takes: None,
                questions: vec![],
                request: None,
            })
        );
        let close = Decision::Close {
            reason: CloseReason::ToolRan,
        };
        assert_eq!(
            close.into_report(Cli::Hermes, "s".into(), 8),
            Some(Report::Close {
                cli: Cli::Hermes,
                session: "s".into(),
                seq: 8,
                reason: CloseReason::ToolRan
            })
        );
        let ignore = Decision::Ignore { why: "x".into() };
        assert_eq!(ignore.into_report(Cli::Codex, "s".into(), 9), None);
    }

    #[test]
    fn plugin_clis_install_no_hooks() {
        assert!(hooks(Cli::Opencode).is_empty() && hooks(Cli::Hermes).is_empty());
    }

    #[test]
    fn non_objects_are_ignored() {
        for cli in Cli::ALL {
            let c = classify(*cli, &json!("Stop"));
            assert!(matches!(c.decision, Decision::Ignore { .. }), "{cli}");
        }
    }

    #[test]
    fn classify_output_is_one_flat_object() {
        let c = Classified {
            session: Some("s".into()),
            decision: close(CloseReason::ToolRan),
            takeable: None,
            agent: None,
        };
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"session": "s", "action": "close", "reason": "tool_ran"})
        );
    }

    #[test]
    fn one_shot_runs_are_told_by_their_command_lines() {
        let a = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        let yes = [
            (Cli::ClaudeCode, "/opt/claude/bin/claude.exe -p Shall I?"),
            (Cli::ClaudeCode, "/usr/local/bin/claude --print hi"),
            (Cli::ClaudeCode, "claude --model opus -p hi"),
            (Cli::Codex, "/usr/bin/codex exec --json hi"),
            (Cli::Codex, "codex e hi"),
            (Cli::Opencode, "/x/bin/opencode run say hi"),
            (
                Cli::Hermes,
                "/venv/bin/python /venv/bin/hermes chat -q hi -Q",
            ),
            // Gemini CLI relaunches itself under node, as seen with 0.61.0.
            (
                Cli::Gemini,
                "/usr/bin/node --max-old-space-size=12052 /x/node_modules/.bin/gemini -p hi",
            ),
            (
                Cli::Gemini,
                "node /usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js --prompt=hi",
            ),
        ];
        for (cli, line) in yes {
            assert!(one_shot(cli, &a(line)), "{line}");
        }
        let no = [
            (Cli::ClaudeCode, "/opt/claude/bin/claude.exe"),
            (Cli::ClaudeCode, "claude --resume abc"),
            (Cli::ClaudeCode, "claude -- -p"),
            (Cli::Codex, "codex --no-daemon"),
            (Cli::Codex, "codex resume"),
            (Cli::Opencode, "opencode"),
            (Cli::Opencode, "opencode --model m"),
            (Cli::Hermes, "/venv/bin/python /venv/bin/hermes --cli"),
            (Cli::ClaudeCode, "bash -c claude-wrapper -p"),
            (Cli::Gemini, "/usr/bin/node /x/node_modules/.bin/gemini"),
            (Cli::Gemini, "node /x/bundle/gemini.js -i hi"),
        ];
        for (cli, line) in no {
            assert!(!one_shot(cli, &a(line)), "{line}");
        }
    }

    #[test]
    fn a_subagent_s_tools_close_only_what_it_asked_and_a_round_end_only_the_person_s() {
        use CloseReason::*;
        // The person's tool ran: the person's question closes, a subagent's stays.
        assert!(close_applies(ToolRan, None, None));
        assert!(!close_applies(ToolRan, None, Some("a1")));
        // A subagent's tool ran: its own question closes, nobody else's.
        assert!(close_applies(ToolRan, Some("a1"), Some("a1")));
        assert!(!close_applies(ToolRan, Some("a1"), Some("a2")));
        assert!(!close_applies(Answered, Some("a1"), None));
        // The parent's round ended while its subagent still asks: that stays.
        assert!(close_applies(RoundEnd, None, None));
        assert!(!close_applies(RoundEnd, None, Some("a1")));
        // A subagent's end closes what it asked, not the person's dialog.
        assert!(close_applies(RoundEnd, Some("a1"), Some("a1")));
        assert!(!close_applies(RoundEnd, Some("a1"), None));
        // Whatever a subagent does closes only its own: a form it cancelled,
        // an interrupt of its turn.
        for r in [Dismissed, Interrupted, SessionEnd] {
            assert!(!close_applies(r, Some("a1"), None), "{r:?}");
            assert!(!close_applies(r, Some("a1"), Some("a2")), "{r:?}");
            assert!(close_applies(r, Some("a1"), Some("a1")), "{r:?}");
        }
        assert!(!close_applies(Dismissed, None, Some("a1")));
        // What the person does ends any.
        for r in [PromptSubmitted, SessionEnd, Interrupted] {
            assert!(close_applies(r, None, Some("a1")), "{r:?}");
        }
    }

    #[test]
    fn several_questions_are_joined_and_labelled() {
        let d = dialog(
            Some(&json!([
                {"question": "Auth?", "header": "Auth", "options": [{"label": "OAuth"}]},
                {"question": "DB?", "header": "DB", "options": [{"label": "SQLite", "description": "local"}]}
            ])),
            "x",
        );
        assert_eq!(
            d,
            Decision::Open {
                kind: Kind::Dialog,
                text: "Auth?\nDB?".into(),
                options: vec![
                    QuestionOption {
                        label: "Auth: OAuth".into(),
                        description: None
                    },
                    QuestionOption {
                        label: "DB: SQLite".into(),
                        description: Some("local".into())
                    },
                ],
            }
        );
    }

    #[test]
    fn a_dialog_without_questions_uses_the_fallback() {
        let d = dialog(None, "Claude Code is asking");
        assert_eq!(
            d,
            Decision::Open {
                kind: Kind::Dialog,
                text: "Claude Code is asking".into(),
                options: vec![]
            }
        );
    }
}
