//! Which hook event opens a question, closes it, or means nothing.
//!
//! One module per CLI, each a direct reading of the hook table in
//! `docs/hooks.md`, so the reporter (and one day the Worker, for raw payloads)
//! apply the same rules. The input is the JSON that the CLI's hook (Claude
//! Code, Codex) or our plugin (OpenCode, Hermes, see [`plugin_events`]) writes on
//! the reporter's stdin. Beside each classifier stands the list of hook events
//! that `report-prompt install` adds for that CLI ([`hooks`]), so what is
//! installed and what it means are read in one file.
//!
//! * `claude_code`, `codex`, `copilot`, `gemini`: each CLI's hook events; [`plugin_events`]: our plugins' (OpenCode, Hermes).
//! * [`event`]: what one event means, in the words every classifier writes it with.
//! * [`card`]: the card of a request an answer from afar covers.
//! * [`codex_app`]: Codex's app-server requests, as needs-you reads them.
//! * `elicitation`: an MCP server asking the person for input.
//! * `opencode_prompt`: whether OpenCode's screen shows its prompt empty.

pub mod card;
mod claude_code;
mod codex;
pub mod codex_app;
mod copilot;
mod elicitation;
pub mod event;
mod gemini;
mod opencode_prompt;
pub mod plugin_events;

use serde::Serialize;
use serde_json::Value;

use event::ignore;
pub use event::{dialog_fits, Decision, HookSpec, Takeable};

use crate::agent::Description;
use crate::report::{Cli, CloseReason, Kind};

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

pub use claude_code::HOOKS as CLAUDE_CODE_HOOKS;
pub use claude_code::{
    hook_output as claude_code_hook_output, plan_text, transcript_plan_file,
    transcript_tool_events, ToolEvent, PLAN_TOOL,
};
pub use codex::HOOKS as CODEX_HOOKS;

/// A decision on `request`, in the reply form of the CLI our plugin hands
/// it to (OpenCode's `once`, `reject` or `always`); `None` for a CLI whose
/// plugin takes no decision, or an answer the request does not offer.
pub fn plugin_reply(
    cli: Cli,
    answer: &crate::afar::AnswerBody,
    request: &crate::request::Request,
) -> Option<Value> {
    match cli {
        Cli::Opencode => plugin_events::opencode_reply(answer, request),
        _ => None,
    }
}

/// The hook events installed for `cli`: none for the CLIs that load plugins.
pub fn hooks(cli: Cli) -> &'static [HookSpec] {
    cli.describe().hooks
}

impl Cli {
    /// What the project knows of this CLI ([`crate::agent`]): the registry,
    /// the one place that names every CLI's description. A copy, always
    /// inlined: a caller that reads only its words (the Worker's) leaves
    /// its classifier out of the build.
    #[inline(always)]
    pub const fn describe(self) -> Description {
        match self {
            Cli::ClaudeCode => claude_code::DESCRIPTION,
            Cli::Codex => codex::DESCRIPTION,
            Cli::Opencode => plugin_events::OPENCODE,
            Cli::Hermes => plugin_events::HERMES,
            Cli::Copilot => copilot::DESCRIPTION,
            Cli::Gemini => gemini::DESCRIPTION,
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::event::{close, dialog};
    use crate::report::{QuestionOption, Report};
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
                lasting: Vec::new(),
                sealed: None,
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
