//! What one event of a CLI means, in the words every CLI's classifier
//! writes it with: the [`Decision`], what of its dialog can be taken from
//! afar ([`Takeable`]), the hook events installed for it ([`HookSpec`]), and
//! the readings that several CLIs' events share (a dialog's questions, a
//! round's end, a subagent's words). Below every CLI's module: none of them
//! is named here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::afar::{self, Afar, DialogQuestion, Takes};
use crate::question::{ends_with_question, reply_tail};
use crate::report::{Cli, CloseReason, Kind, QuestionOption, Report, MAX_LABEL_CHARS, MAX_OPTIONS};
use crate::request::Request;
use crate::text;
use crate::text::truncate_chars;

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
    /// Whether it asks the person something: a dialog open, or announced.
    pub fn asks(&self) -> bool {
        matches!(self, Decision::Open { .. } | Decision::Expect { .. })
    }

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
                lasting: Vec::new(),
                sealed: None,
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
    /// [`dialog_fits`]).
    pub(crate) fn new(
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
        let whole = request.fits() && (takes != Afar::Choices || dialog_fits(&request));
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

/// Whether a dialog's card shows its request whole: at most
/// [`afar::MAX_QUESTIONS`] questions and [`MAX_OPTIONS`] options in all, no
/// label longer than [`MAX_LABEL_CHARS`]. A larger one takes no choices
/// from afar: a card that left out an option would not be what is chosen.
pub fn dialog_fits(request: &Request) -> bool {
    let items: Vec<&Value> = match request.dialog_questions() {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(q @ Value::Object(_)) => vec![q],
        _ => Vec::new(),
    };
    let options: Vec<&Value> = items
        .iter()
        .flat_map(|q| {
            q.get("options")
                .or_else(|| q.get("choices"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .collect();
    let label_fits = |o: &&Value| {
        let label = o.as_str().or_else(|| str_field(o, "label")).unwrap_or("");
        label.chars().count() <= MAX_LABEL_CHARS
    };
    items.len() <= afar::MAX_QUESTIONS
        && options.len() <= MAX_OPTIONS
        && options.iter().all(label_fits)
}

/// A card's `text`, or, for a request too large to carry whole, why it is
/// answered in the terminal followed by `text`.
pub fn with_why_too_large(request: &Request, text: String) -> String {
    if request.fits() {
        return text;
    }
    format!(
        "This request is too large to approve from afar ({} KB): answer it in the terminal.\n\n{text}",
        request.size() / 1024
    )
}

/// A dialog request's questions as its card shows them, every control and
/// invisible character written out ([`text::visible`]).
pub fn shown_dialog_questions(request: &Request) -> Vec<DialogQuestion> {
    let shown = |s: &str| text::visible(s);
    let option = |o: &QuestionOption| QuestionOption {
        label: shown(&o.label),
        description: o.description.as_deref().map(shown),
    };
    dialog_questions(request.dialog_questions(), true)
        .into_iter()
        .map(|q| DialogQuestion {
            question: shown(&q.question),
            header: shown(&q.header),
            options: q.options.iter().map(option).collect(),
            ..q
        })
        .collect()
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

pub(crate) fn ignore(why: impl Into<String>) -> Decision {
    Decision::Ignore { why: why.into() }
}

pub(crate) fn close(reason: CloseReason) -> Decision {
    Decision::Close { reason }
}

pub(crate) fn str_field<'a>(event: &'a Value, field: &str) -> Option<&'a str> {
    event.get(field).and_then(Value::as_str)
}

/// A subagent's events carry `agent_id` (and its kind in `agent_type`).
pub(crate) fn is_subagent(event: &Value) -> bool {
    event.get("agent_id").is_some_and(|v| !v.is_null())
}

/// A subagent's dialog in the person's words: what it asks, and which agent
/// asks it, as the terminal says ("from the general-purpose agent").
pub(crate) fn from_agent(text: String, event: &Value) -> String {
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
pub(crate) fn command_with_description(
    command: Option<&str>,
    description: Option<&str>,
) -> Option<String> {
    let command = command.filter(|c| !c.is_empty());
    match (command, description.filter(|d| !d.is_empty())) {
        (Some(c), Some(d)) => Some(format!("{d}\n$ {c}")),
        (None, Some(d)) => Some(d.to_owned()),
        (_, None) => None,
    }
}

/// The end of a round: a reply that ends with a question opens one, any other
/// reply closes what is open, since no dialog can still be open once the round ended.
pub(crate) fn round_end(reply: Option<&str>) -> Decision {
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
pub(crate) fn dialog_questions(questions: Option<&Value>, other: bool) -> Vec<DialogQuestion> {
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
pub(crate) fn dialog(questions: Option<&Value>, fallback: &str) -> Decision {
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
