//! The report that the reporter sends to `POST /v1/reports`, and its validation.
//!
//! The Worker validates every body with [`Report::parse`] before it touches D1, so
//! a refused report changes nothing. Over-long text is cut, not refused: a person
//! would rather see the start of a long question than nothing at all.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::afar::{self, Afar, DialogQuestion, Takes};
use crate::lasting::Offer;
use crate::request::Request;
use crate::text::{self, truncate_chars};

/// Most bytes in a request body.
pub const MAX_BODY_BYTES: usize = 32 * 1024;
/// Most bytes in a report whose words are sealed (they hold its request, as
/// base64url, a third larger than in the clear), or that carries its
/// request and the card built from it in the clear.
pub const MAX_SEALED_BODY_BYTES: usize = 96 * 1024;
/// Most characters of `text`; longer text is cut with an ellipsis.
pub const MAX_TEXT_CHARS: usize = 4000;
/// Most options kept; further options are dropped.
pub const MAX_OPTIONS: usize = 20;
/// Most characters of an option's label and of its description.
pub const MAX_LABEL_CHARS: usize = 200;
pub const MAX_DESCRIPTION_CHARS: usize = 1000;
/// Most characters of a session id. Ids are not cut: two cut ids could collide.
pub const MAX_SESSION_CHARS: usize = 200;
/// The largest `seq`: integers up to 2^53 - 1 survive JSON, JavaScript and D1 exactly.
pub const MAX_SEQ: u64 = (1 << 53) - 1;

pub use crate::kinds::{Cli, CloseReason, Kind, QuestionOption};

/// The sealed part of an open report, as it travels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sealed {
    /// The question's words ([`crate::words::Words`]), sealed.
    pub words: String,
    /// Which question it is, for the server to tell the same one reported
    /// again from another: a keyed hash of the words (64 hex digits) that
    /// says nothing of them to whoever lacks the content key.
    pub same: String,
    /// A permission's lasting choices, each with an empty label and its
    /// words ([`crate::words::RuleWords`]) sealed as its `rule`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lasting: Vec<Offer>,
    /// What a notification shows of it, sealed apart
    /// ([`crate::sealed::field::SUMMARY`]), for the service worker to open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// A validated report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "lowercase")]
// One report is made, sent or read at a time, never kept in bulk: the
// close's unused bytes cost nothing that boxing an open's fields would save.
#[allow(clippy::large_enum_variant)]
pub enum Report {
    Open {
        cli: Cli,
        session: String,
        seq: u64,
        kind: Kind,
        text: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        options: Vec<QuestionOption>,
        /// Where the agent runs; reporters before it sent none.
        #[serde(skip_serializing_if = "Option::is_none")]
        terminal: Option<Terminal>,
        /// What the agent's machine can take from afar for it, if anything.
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        takes: Option<Takes>,
        /// A dialog's questions, as asked (its `text` and `options` are them
        /// flattened, for every screen that shows one list).
        #[serde(skip_serializing_if = "Vec::is_empty")]
        questions: Vec<DialogQuestion>,
        /// The request an answer from afar covers, given with `takes`: its
        /// text, options and questions are the card its reporter built from
        /// it ([`crate::classify::card::built`]); a device shows and signs
        /// the card it builds from it itself ([`crate::request`]).
        #[serde(skip_serializing_if = "Option::is_none")]
        request: Option<Box<Request>>,
        /// A permission's lasting choices, as its reporter read them from
        /// `request` ([`crate::lasting::offered`]): the server, which reads
        /// no request, keeps them as given, as it keeps a sealed report's.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        lasting: Vec<Offer>,
        /// Its words, sealed on the agent's machine ([`crate::words`]):
        /// then its `text`, `options`, `questions`, `request` and its
        /// terminal's folder travel empty.
        #[serde(skip_serializing_if = "Option::is_none")]
        sealed: Option<Box<Sealed>>,
    },
    Close {
        cli: Cli,
        session: String,
        seq: u64,
        reason: CloseReason,
    },
}

wire_enum! {
    /// The terminal an agent runs in: `tmux`, or `terminal` for any other
    /// (nothing can be typed into it from afar).
    TerminalKind { Tmux = "tmux", Terminal = "terminal" }
}

/// Where an agent runs, as its reporter saw it: every card says which
/// terminal to go to, and whether an answer can be typed into it from afar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Terminal {
    pub kind: TerminalKind,
    pub host: String,
    pub cwd: String,
    /// tmux's `session:window.pane`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Whether its machine hands a reply's answer to the agent as a message
    /// through the agent's own protocol (Codex under `needs-you run`, through
    /// its app-server), in tmux or not: no key is typed then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub messages: bool,
}

impl Terminal {
    /// Whether a reply can be answered from afar: as a message where its
    /// machine sends one, else typed with tmux's `send-keys`, so into tmux
    /// panes only.
    pub fn answerable(&self) -> bool {
        self.messages || self.kind == TerminalKind::Tmux
    }

    fn from_value(v: Option<&Value>) -> Result<Option<Terminal>, ReportError> {
        let obj = match v {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(o)) => o,
            Some(_) => return Err(ReportError::invalid("`terminal` must be an object")),
        };
        let text = |field: &str, max: usize| -> Result<String, ReportError> {
            match obj.get(field) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(s)) => Ok(truncate_chars(&text::line(s), max)),
                Some(_) => Err(ReportError::invalid(format!(
                    "`terminal.{field}` must be a string"
                ))),
            }
        };
        let kind = TerminalKind::parse(&text("kind", 20)?).ok_or_else(|| {
            ReportError::invalid(format!(
                "`terminal.kind` must be one of {}",
                TerminalKind::choices()
            ))
        })?;
        let target = Some(text("target", 200)?).filter(|t| !t.is_empty());
        let messages = match obj.get("messages") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(ReportError::invalid(
                    "`terminal.messages` must be true or false",
                ))
            }
        };
        Ok(Some(Terminal {
            kind,
            host: text("host", 200)?,
            cwd: text("cwd", 1000)?,
            target,
            messages,
        }))
    }
}

/// Why a body was refused: a stable `code` for programs, a `message` for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportError {
    pub code: &'static str,
    pub message: String,
}

impl ReportError {
    fn invalid(message: impl Into<String>) -> Self {
        ReportError {
            code: "invalid_report",
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ReportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ReportError {}

impl Report {
    /// Parses and validates a request body. Unknown fields are ignored so that
    /// newer reporters can talk to older servers.
    pub fn parse(body: &[u8]) -> Result<Report, ReportError> {
        let too_large = |limit: usize| ReportError {
            code: "too_large",
            message: format!("the body is {} bytes; the limit is {limit}", body.len()),
        };
        if body.len() > MAX_SEALED_BODY_BYTES {
            return Err(too_large(MAX_SEALED_BODY_BYTES));
        }
        let value: Value = serde_json::from_slice(body).map_err(|e| ReportError {
            code: "invalid_json",
            message: format!("the body is not valid JSON: {e}"),
        })?;
        let report = Report::from_value(&value)?;
        // A request and the card built from it, sealed or not, may take
        // twice a request's room.
        let carries_its_card = matches!(
            report,
            Report::Open {
                sealed: Some(_),
                ..
            } | Report::Open {
                request: Some(_),
                ..
            }
        );
        if !carries_its_card && body.len() > MAX_BODY_BYTES {
            return Err(too_large(MAX_BODY_BYTES));
        }
        Ok(report)
    }

    /// Validates an already parsed JSON value.
    pub fn from_value(value: &Value) -> Result<Report, ReportError> {
        let obj = value
            .as_object()
            .ok_or_else(|| ReportError::invalid("the report must be a JSON object"))?;
        let action = required_str(obj, "action")?;
        let cli = parse_enum(obj, "cli", Cli::parse, Cli::choices)?;
        let session = required_str(obj, "session")?;
        if session.is_empty() || session.chars().count() > MAX_SESSION_CHARS {
            return Err(ReportError::invalid(format!(
                "`session` must be 1 to {MAX_SESSION_CHARS} characters"
            )));
        }
        let session = session.to_owned();
        let seq = match obj.get("seq") {
            Some(v) => v.as_u64().filter(|&n| n <= MAX_SEQ),
            None => return Err(ReportError::invalid("`seq` is missing")),
        }
        .ok_or_else(|| {
            ReportError::invalid(format!("`seq` must be a whole number from 0 to {MAX_SEQ}"))
        })?;
        match action {
            "open" => {
                let kind = parse_enum(obj, "kind", Kind::parse, Kind::choices)?;
                let text = match obj.get("text") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => listed_text(s),
                    Some(_) => return Err(ReportError::invalid("`text` must be a string")),
                };
                let options = parse_options(obj.get("options"))?;
                let mut terminal = Terminal::from_value(obj.get("terminal"))?;
                let takes = parse_takes(obj, kind)?;
                let questions = parse_questions(obj.get("questions"))?;
                let sealed = parse_sealed(obj.get("sealed"))?;
                let request = parse_request(obj)?;
                let lasting = parse_lasting(obj.get("lasting"))?;
                let (takes, request) = match &sealed {
                    Some(_) => {
                        let cwd = terminal.as_ref().map_or("", |t| t.cwd.as_str());
                        if !(text.is_empty()
                            && options.is_empty()
                            && questions.is_empty()
                            && request.is_none()
                            && lasting.is_empty()
                            && cwd.is_empty())
                        {
                            return Err(ReportError {
                                code: "words_in_the_clear",
                                message: "a sealed report carries its words sealed only: no `text`, `options`, `questions`, `request`, `lasting` or `terminal.cwd` beside `sealed`".into(),
                            });
                        }
                        // Its tmux pane is sealed with its words too (a
                        // session is often named after its work); one an
                        // older reporter sent beside them is not kept.
                        if let Some(t) = terminal.as_mut() {
                            t.target = None;
                        }
                        // Its request is sealed with its words: what it
                        // takes stays bound by the digest alone, which the
                        // agent's machine checks against its own record.
                        (takes, None)
                    }
                    None => bind_request(takes, request)?.unzip(),
                };
                // Lasting choices only where a decision is taken from afar.
                let decides = takes.as_ref().is_some_and(|t| t.takes == Afar::Decision);
                let lasting = if decides && request.is_some() {
                    lasting
                } else {
                    Vec::new()
                };
                Ok(Report::Open {
                    cli,
                    session,
                    seq,
                    kind,
                    text,
                    options,
                    terminal,
                    takes,
                    questions,
                    request,
                    lasting,
                    sealed,
                })
            }
            "close" => {
                let reason = match obj.get("reason") {
                    // A close without a reason is an answer: the common case.
                    None | Some(Value::Null) => CloseReason::Answered,
                    Some(_) => parse_enum(obj, "reason", CloseReason::parse, CloseReason::choices)?,
                };
                Ok(Report::Close {
                    cli,
                    session,
                    seq,
                    reason,
                })
            }
            other => Err(ReportError::invalid(format!(
                "`action` must be open or close, not {other:?}"
            ))),
        }
    }

    pub fn session(&self) -> &str {
        match self {
            Report::Open { session, .. } | Report::Close { session, .. } => session,
        }
    }

    pub fn seq(&self) -> u64 {
        match self {
            Report::Open { seq, .. } | Report::Close { seq, .. } => *seq,
        }
    }

    pub fn cli(&self) -> Cli {
        match self {
            Report::Open { cli, .. } | Report::Close { cli, .. } => *cli,
        }
    }
}

fn required_str<'a>(obj: &'a Map<String, Value>, field: &str) -> Result<&'a str, ReportError> {
    match obj.get(field) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ReportError::invalid(format!("`{field}` must be a string"))),
        None => Err(ReportError::invalid(format!("`{field}` is missing"))),
    }
}

fn parse_enum<T>(
    obj: &Map<String, Value>,
    field: &str,
    parse: fn(&str) -> Option<T>,
    choices: fn() -> String,
) -> Result<T, ReportError> {
    let s = required_str(obj, field)?;
    parse(s).ok_or_else(|| {
        ReportError::invalid(format!("`{field}` must be one of {}, not {s:?}", choices()))
    })
}

fn parse_options(value: Option<&Value>) -> Result<Vec<QuestionOption>, ReportError> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ReportError::invalid("`options` must be an array")),
    };
    items
        .iter()
        .take(MAX_OPTIONS)
        .enumerate()
        .map(|(i, item)| parse_option(item).ok_or_else(|| ReportError::invalid(format!(
            "`options[{i}]` must be an object with a string `label` and an optional string `description`"
        ))))
        .collect()
}

/// `takes` and `digest`, both or neither; what the open takes must answer
/// its kind (a decision a permission, choices a dialog).
fn parse_takes(obj: &Map<String, Value>, kind: Kind) -> Result<Option<Takes>, ReportError> {
    let (takes, digest) = match (obj.get("takes"), obj.get("digest")) {
        (None | Some(Value::Null), None | Some(Value::Null)) => return Ok(None),
        (Some(Value::String(t)), Some(Value::String(d))) => (t, d),
        _ => {
            return Err(ReportError::invalid(
                "`takes` and `digest` are two strings, given together",
            ))
        }
    };
    let takes = Afar::parse(takes)
        .filter(|t| *t != Afar::Text && t.answers(kind))
        .ok_or_else(|| {
            ReportError::invalid(format!(
                "`takes` must be decision for a permission, choices for a dialog, not {takes:?}"
            ))
        })?;
    if !afar::is_digest(digest) {
        return Err(ReportError::invalid(
            "`digest` must be 64 lower-case hex digits",
        ));
    }
    Ok(Some(Takes {
        takes,
        digest: digest.clone(),
    }))
}

/// `sealed`, when given: the words blob, the sameness key, and the lasting
/// choices by id and scope with their words sealed. Only the forms are
/// checked: nothing here can open them.
fn parse_sealed(value: Option<&Value>) -> Result<Option<Box<Sealed>>, ReportError> {
    use crate::sealed::{max_sealed_chars, SealedText};
    let bad = |why: &str| ReportError::invalid(format!("`sealed` {why}"));
    let v = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(v) => v,
    };
    let mut sealed: Sealed = serde_json::from_value(v.clone()).map_err(|_| {
        bad("must be {\"words\": a sealed text, \"same\": 64 hex digits, \"lasting\"?: [choices]}")
    })?;
    let is_sealed = |t: &str, max: usize| t.len() <= max && SealedText::parse(t).is_some();
    if !is_sealed(&sealed.words, MAX_SEALED_BODY_BYTES) {
        return Err(bad(
            "`words` must be a sealed text (s1.…) that fits a report",
        ));
    }
    let summary_chars = max_sealed_chars(crate::sealed::MAX_SUMMARY_BYTES);
    if !(sealed.summary.as_deref()).is_none_or(|s| is_sealed(s, summary_chars)) {
        return Err(bad("`summary` must be a sealed text (s1.…) of a summary"));
    }
    if !afar::is_digest(&sealed.same) {
        return Err(bad("`same` must be 64 lower-case hex digits"));
    }
    let rule_chars = max_sealed_chars(2 * MAX_DESCRIPTION_CHARS);
    check_offers(&mut sealed.lasting, |offer| {
        offer.label.is_empty() && (offer.rule.as_deref()).is_some_and(|r| is_sealed(r, rule_chars))
    })
    .map_err(|_| bad("`lasting` holds a choice that is not an id, a scope and its sealed words"))?;
    Ok(Some(Box::new(sealed)))
}

/// `text` as an open's is kept and listed: its paragraphs cleaned, cut to
/// [`MAX_TEXT_CHARS`]. A device compares a card it builds with the list's
/// words in this form ([`crate::classify::card::check_shown`]).
pub fn listed_text(text: &str) -> String {
    truncate_chars(&text::paragraphs(text), MAX_TEXT_CHARS)
}

/// A report's lasting choices in the clear: each an id, a scope, a label
/// (the rule in a few words more) and the rule it grants.
fn parse_lasting(value: Option<&Value>) -> Result<Vec<Offer>, ReportError> {
    let bad = || {
        ReportError::invalid(
            "`lasting` must be an array of lasting choices, each an id, a label, a rule and a scope",
        )
    };
    let mut offers: Vec<Offer> = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|_| bad())?,
    };
    let fits = |s: &str, max: usize| !s.is_empty() && s.chars().count() <= max;
    check_offers(&mut offers, |offer| {
        fits(&offer.label, MAX_LABEL_CHARS + 2 * MAX_DESCRIPTION_CHARS)
            && (offer.rule.as_deref()).is_some_and(|r| fits(r, 2 * MAX_DESCRIPTION_CHARS))
    })
    .map_err(|_| bad())?;
    for offer in &mut offers {
        offer.label = text::line(&offer.label);
        offer.rule = offer.rule.as_deref().map(text::line);
    }
    Ok(offers)
}

/// Checks `offers`, sealed or in the clear (`words_fit` says whether an
/// offer's words are as they must be): at most [`crate::lasting::MAX_LASTING`],
/// each lasting, with an id and a scope; and writes where each is kept, and
/// for how long, in the server's own words, never the reporter's.
fn check_offers(offers: &mut [Offer], words_fit: impl Fn(&Offer) -> bool) -> Result<(), ()> {
    if offers.len() > crate::lasting::MAX_LASTING {
        return Err(());
    }
    for offer in offers {
        let well_formed = offer.lasting && crate::lasting::is_id(&offer.id) && words_fit(offer);
        let scope = offer.scope.filter(|_| well_formed).ok_or(())?;
        offer.place = Some(scope.place().to_owned());
        offer.lasts = Some(scope.lasts().to_owned());
    }
    Ok(())
}

/// `request`, when given: `{"tool", "input"}`.
fn parse_request(obj: &Map<String, Value>) -> Result<Option<Request>, ReportError> {
    match obj.get("request") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Request::from_value(v)
            .map(Some)
            .map_err(ReportError::invalid),
    }
}

/// What an open takes from afar, bound to its request, whose digest must be
/// the one given (a device shows and signs the card it builds from the
/// request, `classify::card::to_sign`). An open that takes something without its
/// request (an older reporter's) takes nothing: it is listed, and answered in
/// the terminal. A request without `takes` binds nothing and is dropped.
fn bind_request(
    takes: Option<Takes>,
    request: Option<Request>,
) -> Result<Option<(Takes, Box<Request>)>, ReportError> {
    let (Some(takes), Some(request)) = (takes, request) else {
        return Ok(None);
    };
    if !request.fits() {
        return Err(ReportError {
            code: "request_too_large",
            message: format!(
                "`request` is {} bytes; a request answered from afar is at most {}",
                request.size(),
                crate::request::MAX_REQUEST_BYTES
            ),
        });
    }
    if request.digest() != takes.digest {
        return Err(ReportError {
            code: "digest_mismatch",
            message: "`digest` is not the digest of `request`".into(),
        });
    }
    Ok(Some((takes, Box::new(request))))
}

/// A dialog's questions: at most [`afar::MAX_QUESTIONS`], each cleaned and
/// cut like the flat text and options.
fn parse_questions(value: Option<&Value>) -> Result<Vec<DialogQuestion>, ReportError> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) if items.len() <= afar::MAX_QUESTIONS => items,
        Some(_) => {
            return Err(ReportError::invalid(format!(
                "`questions` must be an array of at most {} questions",
                afar::MAX_QUESTIONS
            )))
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let bad = || {
                ReportError::invalid(format!(
                    "`questions[{i}]` must be {{question, header?, options, multi_select?, other?}}"
                ))
            };
            let q: DialogQuestion = serde_json::from_value(item.clone()).map_err(|_| bad())?;
            Ok(DialogQuestion {
                question: truncate_chars(&text::paragraphs(&q.question), MAX_TEXT_CHARS),
                header: truncate_chars(&text::line(&q.header), MAX_LABEL_CHARS),
                options: parse_options(item.get("options"))?,
                multi_select: q.multi_select,
                other: q.other,
            })
        })
        .collect()
}

fn parse_option(item: &Value) -> Option<QuestionOption> {
    let obj = item.as_object()?;
    let label = obj.get("label")?.as_str()?;
    let description = match obj.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(truncate_chars(&text::paragraphs(s), MAX_DESCRIPTION_CHARS)),
        Some(_) => return None,
    };
    Some(QuestionOption {
        label: truncate_chars(&text::line(label), MAX_LABEL_CHARS),
        description,
    })
}

#[cfg(test)]
mod terminal_tests {
    use super::*;
    use serde_json::json;

    fn open(terminal: Value) -> Result<Report, ReportError> {
        Report::from_value(&json!({"action": "open", "kind": "reply", "cli": "codex",
            "session": "s", "seq": 1, "text": "Go on?", "terminal": terminal}))
    }

    #[test]
    fn a_terminal_is_optional_and_only_tmux_is_answerable() {
        let Report::Open { terminal, .. } = open(json!({"kind": "tmux", "host": "box",
            "cwd": "/src/api", "target": "main:1.0"}))
        .unwrap() else {
            panic!()
        };
        let t = terminal.unwrap();
        assert!(t.answerable());
        assert_eq!(t.target.as_deref(), Some("main:1.0"));
        let Report::Open { terminal, .. } =
            open(json!({"kind": "terminal", "host": "box", "cwd": "/"})).unwrap()
        else {
            panic!()
        };
        assert!(
            !terminal.unwrap().answerable(),
            "nothing is typed into a terminal we cannot reach"
        );
        // Its machine sends a reply's answer as a message: answerable anywhere.
        let Report::Open { terminal, .. } =
            open(json!({"kind": "terminal", "host": "box", "cwd": "/", "messages": true})).unwrap()
        else {
            panic!()
        };
        assert!(terminal.unwrap().answerable());
        assert!(open(json!({"kind": "terminal", "messages": "yes"})).is_err());
        assert!(matches!(
            open(Value::Null).unwrap(),
            Report::Open { terminal: None, .. }
        ));
        assert!(open(json!({"kind": "kitty"})).is_err());
        assert!(open(json!("tmux")).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Report, ReportError> {
        Report::parse(v.to_string().as_bytes())
    }

    fn sealed_open(extra: Value) -> Value {
        let mut v = json!({"action": "open", "cli": "claude-code", "session": "s", "seq": 2,
            "kind": "permission", "takes": "decision", "digest": "a".repeat(64),
            "terminal": {"kind": "tmux", "host": "box", "target": "a:0.1"},
            "sealed": {"words": "s1.1.AAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBB", "same": "b".repeat(64),
                       "lasting": [{"id": format!("keep-{}", "c".repeat(64)), "label": "",
                                    "lasting": true, "rule": "s1.1.AAAAAAAAAAAAAAAA.CCCCCCCC",
                                    "scope": "project", "place": "made up by the reporter"}]}});
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    }

    /// A clear permission that takes a decision for `npm test`, with the
    /// lasting choices `lasting`.
    fn clear_open(takes: &str, lasting: Value) -> Value {
        let request = Request::new("Bash", &json!({"command": "npm test"}));
        json!({"action": "open", "cli": "claude-code", "session": "s", "seq": 2,
            "kind": "permission", "text": "Claude Code wants to run: npm test",
            "takes": takes, "digest": request.digest(), "request": request, "lasting": lasting})
    }

    fn offer(label: &str, rule: &str) -> Value {
        json!({"id": format!("keep-{}", "c".repeat(64)), "label": label, "lasting": true,
               "rule": rule, "scope": "project", "place": "made up by the reporter"})
    }

    #[test]
    fn a_clear_open_keeps_the_lasting_choices_its_reporter_read_only_for_a_decision() {
        let Report::Open { lasting, .. } = parse(clear_open(
            "decision",
            json!([offer("Yes, and\ndon't ask again", "Bash(npm test *)")]),
        ))
        .unwrap() else {
            panic!()
        };
        assert_eq!(lasting.len(), 1);
        assert_eq!(lasting[0].label, "Yes, and don't ask again", "one line");
        assert_eq!(
            lasting[0].place.as_deref(),
            Some(crate::lasting::Scope::Project.place()),
            "where it is kept is said in the server's words"
        );
        // Choices of an open that takes nothing are dropped; ill-formed ones
        // refused.
        let mut untaken = clear_open("decision", json!([offer("Yes", "Bash(npm test *)")]));
        for field in ["takes", "digest"] {
            untaken.as_object_mut().unwrap().remove(field);
        }
        let Report::Open { lasting, .. } = parse(untaken).unwrap() else {
            panic!()
        };
        assert!(lasting.is_empty());
        for bad in [
            json!([offer("", "Bash(npm test *)")]),
            json!([offer("Yes", "")]),
            json!([offer("Yes", &"x".repeat(2 * MAX_DESCRIPTION_CHARS + 1))]),
            json!([offer(
                &"x".repeat(MAX_LABEL_CHARS + 2 * MAX_DESCRIPTION_CHARS + 1),
                "r"
            )]),
            json!([{"id": "allow", "label": "Yes", "lasting": true, "rule": "r", "scope": "project"}]),
            json!([{"id": format!("keep-{}", "c".repeat(64)), "label": "Yes", "lasting": true, "rule": "r"}]),
            json!(vec![offer("Yes", "r"); crate::lasting::MAX_LASTING + 1]),
            json!("keep"),
        ] {
            let e = parse(clear_open("decision", bad.clone())).unwrap_err();
            assert_eq!(e.code, "invalid_report", "{bad}");
        }
        // Beside sealed words, lasting choices in the clear are words.
        let e = parse(sealed_open(
            json!({"lasting": [offer("Yes", "Bash(npm test *)")]}),
        ))
        .unwrap_err();
        assert_eq!(e.code, "words_in_the_clear");
    }

    #[test]
    fn a_sealed_open_keeps_what_it_takes_without_its_request() {
        let Report::Open {
            takes,
            sealed,
            request,
            terminal,
            ..
        } = parse(sealed_open(json!({}))).unwrap()
        else {
            panic!()
        };
        assert_eq!(takes.unwrap().takes, Afar::Decision);
        assert!(request.is_none());
        // A tmux pane sent beside sealed words (an older reporter's) is not kept.
        let terminal = terminal.unwrap();
        assert_eq!((terminal.host.as_str(), terminal.target), ("box", None));
        let offer = &sealed.unwrap().lasting[0];
        // Where a choice is kept is said in the server's words.
        assert_eq!(
            offer.place.as_deref(),
            Some(crate::lasting::Scope::Project.place())
        );
    }

    #[test]
    fn a_sealed_open_with_words_in_the_clear_is_refused() {
        for clear in [
            json!({"text": "deploy"}),
            json!({"options": [{"label": "yes"}]}),
            json!({"request": {"tool": "Bash", "input": {}}}),
            json!({"terminal": {"kind": "tmux", "host": "box", "cwd": "/srv/x"}}),
        ] {
            let err = parse(sealed_open(clear.clone())).unwrap_err();
            assert_eq!(err.code, "words_in_the_clear", "{clear}");
        }
    }

    #[test]
    fn a_sealed_part_that_is_not_sealed_is_refused() {
        for bad in [
            json!({"words": "deploy --token x", "same": "b".repeat(64)}),
            json!({"words": "s1.1.AAAA.BBBB", "same": "short"}),
            json!({"words": "s1.1.AAAA.BBBB", "same": "b".repeat(64),
                   "lasting": [{"id": "always", "label": "", "lasting": true, "rule": "s1.1.A.B", "scope": "user"}]}),
            json!({"words": "s1.1.AAAA.BBBB", "same": "b".repeat(64),
                   "lasting": [{"id": format!("keep-{}", "c".repeat(64)), "label": "Allow npm",
                                "lasting": true, "rule": "s1.1.A.B", "scope": "user"}]}),
            json!({"words": "s1.1.AAAA.BBBB", "same": "b".repeat(64),
                   "lasting": [{"id": format!("keep-{}", "c".repeat(64)), "label": "",
                                "lasting": true, "rule": "Bash(npm *)", "scope": "user"}]}),
        ] {
            let err = parse(sealed_open(json!({"sealed": bad.clone()}))).unwrap_err();
            assert_eq!(err.code, "invalid_report", "{bad}");
        }
    }

    #[test]
    fn open_round_trips() {
        let body = json!({"action": "open", "kind": "dialog", "cli": "claude-code",
            "session": "s1", "seq": 1764460800123000u64, "text": "Which?",
            "options": [{"label": "A", "description": "first"}, {"label": "B"}]});
        let report = parse(body.clone()).unwrap();
        assert_eq!(serde_json::to_value(&report).unwrap(), body);
    }

    #[test]
    fn close_defaults_to_answered() {
        let r =
            parse(json!({"action": "close", "cli": "codex", "session": "s", "seq": 2})).unwrap();
        assert_eq!(
            r,
            Report::Close {
                cli: Cli::Codex,
                session: "s".into(),
                seq: 2,
                reason: CloseReason::Answered
            }
        );
    }

    #[test]
    fn refuses_bad_values_with_a_message_naming_the_field() {
        let cases = [
            (json!([]), "object"),
            (
                json!({"action": "shut", "cli": "codex", "session": "s", "seq": 1}),
                "`action`",
            ),
            (
                json!({"action": "open", "kind": "quiz", "cli": "codex", "session": "s", "seq": 1}),
                "`kind`",
            ),
            (
                json!({"action": "open", "kind": "reply", "cli": "kiro", "session": "s", "seq": 1}),
                "`cli`",
            ),
            (
                json!({"action": "close", "cli": "codex", "session": "", "seq": 1}),
                "`session`",
            ),
            (
                json!({"action": "close", "cli": "codex", "session": "s", "seq": -1}),
                "`seq`",
            ),
            (
                json!({"action": "close", "cli": "codex", "session": "s", "seq": 1.5}),
                "`seq`",
            ),
            (
                json!({"action": "close", "cli": "codex", "session": "s", "seq": "1"}),
                "`seq`",
            ),
            (
                json!({"action": "close", "cli": "codex", "session": "s", "seq": 9007199254740992u64}),
                "`seq`",
            ),
            (
                json!({"action": "close", "cli": "codex", "session": "s", "seq": 1, "reason": "bored"}),
                "`reason`",
            ),
            (
                json!({"action": "open", "kind": "reply", "cli": "codex", "session": "s", "seq": 1, "text": 3}),
                "`text`",
            ),
            (
                json!({"action": "open", "kind": "dialog", "cli": "codex", "session": "s", "seq": 1, "options": [{"x": 1}]}),
                "`options[0]`",
            ),
            (
                json!({"action": "open", "kind": "dialog", "cli": "codex", "session": "s", "seq": 1, "options": "A"}),
                "`options`",
            ),
        ];
        for (body, needle) in cases {
            let err = parse(body.clone()).unwrap_err();
            assert_eq!(err.code, "invalid_report", "{body}");
            assert!(err.message.contains(needle), "{body}: {}", err.message);
        }
    }

    #[test]
    fn refuses_non_json_and_large_bodies() {
        assert_eq!(Report::parse(b"{nope").unwrap_err().code, "invalid_json");
        let big = vec![b' '; MAX_SEALED_BODY_BYTES + 1];
        assert_eq!(Report::parse(&big).unwrap_err().code, "too_large");
        // Above the clear limit: refused in the clear, taken sealed.
        let mut clear =
            json!({"action": "open", "kind": "reply", "cli": "codex", "session": "s", "seq": 1});
        clear["pad"] = json!("x".repeat(MAX_BODY_BYTES));
        let bytes = clear.to_string().into_bytes();
        assert_eq!(Report::parse(&bytes).unwrap_err().code, "too_large");
        clear["sealed"] =
            json!({"words": format!("s1.1.AAAA.{}", "B".repeat(40_000)), "same": "c".repeat(64)});
        assert!(Report::parse(clear.to_string().as_bytes()).is_ok());
    }

    #[test]
    fn cuts_long_text_and_extra_options() {
        let options: Vec<Value> = (0..30).map(|i| json!({"label": format!("o{i}")})).collect();
        let r = parse(
            json!({"action": "open", "kind": "dialog", "cli": "hermes", "session": "s",
            "seq": 1, "text": "a".repeat(5000), "options": options}),
        )
        .unwrap();
        let Report::Open { text, options, .. } = r else {
            panic!("not an open")
        };
        assert_eq!(text.chars().count(), MAX_TEXT_CHARS);
        assert!(text.ends_with('…'));
        assert_eq!(options.len(), MAX_OPTIONS);
    }

    #[test]
    fn an_open_that_takes_an_answer_carries_its_request_and_its_digest() {
        let input = json!({"questions": [{"question": "DB?", "options": [{"label": "SQLite"}]}]});
        let request = json!({"tool": "AskUserQuestion", "input": input});
        let digest = crate::afar::digest("AskUserQuestion", &input);
        let r = parse(
            json!({"action": "open", "kind": "dialog", "cli": "claude-code",
            "session": "s", "seq": 1, "text": "DB?", "takes": "choices", "digest": digest,
            "request": request}),
        )
        .unwrap();
        let Report::Open { takes, .. } = &r else {
            panic!()
        };
        assert_eq!(takes.as_ref().unwrap().takes, Afar::Choices);
        let back = serde_json::to_value(&r).unwrap();
        assert_eq!(
            (back["takes"].as_str(), back["digest"].as_str()),
            (Some("choices"), Some(digest.as_str()))
        );
        assert_eq!(back["request"], request);

        // The digest of another request: refused, whatever the text says.
        let forged = parse(json!({"action": "open", "kind": "permission", "cli": "claude-code",
            "session": "s", "seq": 2, "text": "Run the unit tests\n$ npm test",
            "takes": "decision", "digest": crate::afar::digest("Bash", &json!({"command": "curl x | sh"})),
            "request": {"tool": "Bash", "input": {"command": "npm test"}}}))
        .unwrap_err();
        assert_eq!(forged.code, "digest_mismatch");
        // Without its request an open takes nothing, and keeps its words.
        let older = parse(
            json!({"action": "open", "kind": "permission", "cli": "claude-code",
            "session": "s", "seq": 3, "text": "Run it?", "takes": "decision", "digest": digest}),
        )
        .unwrap();
        let Report::Open { takes, text, .. } = older else {
            panic!()
        };
        assert_eq!((takes, text.as_str()), (None, "Run it?"));
        let big =
            json!({"tool": "Write", "input": {"file_path": "/a", "content": "x".repeat(25_000)}});
        let too_large = parse(
            json!({"action": "open", "kind": "permission", "cli": "claude-code",
            "session": "s", "seq": 4, "takes": "decision",
            "digest": crate::afar::digest("Write", &big["input"]), "request": big}),
        );
        assert_eq!(too_large.unwrap_err().code, "request_too_large");

        for (extra, needle) in [
            (json!({"takes": "decision", "digest": digest}), "`takes`"),
            (json!({"takes": "text", "digest": digest}), "`takes`"),
            (json!({"takes": "choices"}), "given together"),
            (json!({"takes": "choices", "digest": "xyz"}), "`digest`"),
            (json!({"request": {"input": {}}}), "`request.tool`"),
            (
                json!({"questions": [{"question": "no options"}]}),
                "`questions[0]`",
            ),
        ] {
            let mut body = json!({"action": "open", "kind": "dialog", "cli": "claude-code",
                "session": "s", "seq": 1, "text": "DB?"});
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            let err = parse(body).unwrap_err();
            assert!(err.message.contains(needle), "{needle}: {}", err.message);
        }
    }

    #[test]
    fn wire_enums_read_back_what_they_write() {
        for reason in CloseReason::ALL {
            let json = serde_json::to_string(reason).unwrap();
            assert_eq!(serde_json::from_str::<CloseReason>(&json).unwrap(), *reason);
        }
        let err = serde_json::from_str::<Kind>("\"quiz\"").unwrap_err();
        assert!(
            err.to_string().contains("dialog, permission, reply"),
            "{err}"
        );
    }

    #[test]
    fn truncation_counts_characters_not_bytes() {
        assert_eq!(truncate_chars("ééé", 3), "ééé");
        assert_eq!(truncate_chars("éééé", 3), "éé…");
        assert_eq!(truncate_chars("", 0), "");
    }
}
