//! Answering a dialog or a permission from afar, through the agent's own
//! protocol: what a question can take, the answers it takes, and the rules
//! that bind an answer to the very request it answers.
//!
//! * A question says what its agent's machine can take ([`Afar`]): a line
//!   typed into a reply's terminal, a decision for a permission, or choices
//!   for a dialog; nothing, and why ([`why_not`]), for the rest.
//! * An answer ([`AnswerBody`]) is one of those forms, admitted or refused
//!   for its question by one rule ([`admit`], with stable [`Refusal`] codes)
//!   before the Worker queues anything.
//! * A decision or choices carry the question's [`digest`]: a hash of the
//!   tool and its input, which the Worker computes from the request the
//!   report carries (the card is built from the same request,
//!   `crate::request`), and which the very hook that takes the answer
//!   computes again from the dialog on its screen. An allow can so never
//!   land on another dialog than the one the person saw, whatever opened in
//!   the meantime.
//!
//! Allow means this request, once. A lasting choice ("don't ask again")
//! is one the question offers by id, which the CLI itself suggested
//! ([`crate::lasting`]): no form here makes up a rule or widens one.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::kinds::{Cli, Kind, QuestionOption};

pub use crate::refusal::Refusal;

wire_enum! {
    /// What a question can take from afar.
    Afar {
        /// A line typed into the reply's terminal (tmux).
        Text = "text",
        /// Allow once or deny, taken by the agent's hook or plugin.
        Decision = "decision",
        /// A dialog's options chosen, taken likewise.
        Choices = "choices",
    }
}

impl Afar {
    /// The kind of question this form answers: a text a reply, a decision a
    /// permission, choices a dialog. A device builds the card it signs for
    /// as this kind, never as the kind a server says a question is.
    pub fn kind(self) -> Kind {
        match self {
            Afar::Text => Kind::Reply,
            Afar::Decision => Kind::Permission,
            Afar::Choices => Kind::Dialog,
        }
    }

    /// Whether this form answers a question of `kind` ([`Afar::kind`]).
    pub fn answers(self, kind: Kind) -> bool {
        self.kind() == kind
    }
}

/// A permission's answer: allow once, deny, or one of the lasting choices
/// it offers, by id ([`crate::lasting`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Verdict {
    Allow,
    Deny,
    Lasting(String),
}

/// Most bytes of a decision's id.
const MAX_DECISION_BYTES: usize = 80;

impl Verdict {
    pub fn as_str(&self) -> &str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Deny => "deny",
            Verdict::Lasting(id) => id,
        }
    }

    /// Whether it lets the request run.
    pub fn allows(&self) -> bool {
        !matches!(self, Verdict::Deny)
    }
}

impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Verdict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "allow" => Verdict::Allow,
            "deny" => Verdict::Deny,
            id if !id.is_empty() && id.len() <= MAX_DECISION_BYTES => Verdict::Lasting(s),
            _ => {
                return Err(serde::de::Error::custom(
                    "a decision is allow, deny or the id of a choice the question offers",
                ))
            }
        })
    }
}

/// One question of a dialog, as the agent asked it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DialogQuestion {
    pub question: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub header: String,
    pub options: Vec<QuestionOption>,
    /// Several options may be chosen.
    #[serde(default)]
    pub multi_select: bool,
    /// A typed answer, not one of the options, is taken too.
    #[serde(default)]
    pub other: bool,
}

/// Most questions one dialog carries (Claude Code asks 1 to 4).
pub const MAX_QUESTIONS: usize = 8;
/// Most characters of a typed "other" answer, or a denial's message.
pub const MAX_TYPED_CHARS: usize = 500;

/// What a question can take from afar, as its reporter says at the open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Takes {
    /// `decision` for a permission, `choices` for a dialog.
    pub takes: Afar,
    /// [`digest`] of the request.
    pub digest: String,
}

/// An answer, in one of the three forms `POST /v1/questions/{id}/answers`
/// takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AnswerBody {
    /// A reply's answer, typed into its terminal.
    Text { text: String },
    /// A permission allowed once, or denied (with a message for the agent).
    Decision {
        decision: Verdict,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A dialog's answers: one list of labels per question, in order; a
    /// string that is not one of the labels is the typed "other" answer.
    Choices { choices: Vec<Vec<String>> },
}

impl AnswerBody {
    /// The form this body is.
    pub fn form(&self) -> Afar {
        match self {
            AnswerBody::Text { .. } => Afar::Text,
            AnswerBody::Decision { .. } => Afar::Decision,
            AnswerBody::Choices { .. } => Afar::Choices,
        }
    }

    /// Whether it holds words a person wrote or chose: a text, a denial's
    /// message, choices. An allow, a deny or a lasting choice's id alone
    /// hold none.
    pub fn has_words(&self) -> bool {
        match self {
            AnswerBody::Text { text } => !text.is_empty(),
            AnswerBody::Decision { message, .. } => message.is_some(),
            AnswerBody::Choices { choices } => !choices.is_empty(),
        }
    }

    /// Whether this answer's words are where they must not be: in the
    /// clear, or missing their seal, for a question whose words are sealed
    /// (`words_sealed`; a decision may have none); sealed for one whose
    /// words are not. `sealed` says whether sealed words come with it. The
    /// Worker asks it of every answer, and the agent's machine of the
    /// answers to the questions it sealed, whatever the server lists.
    pub fn words_out_of_place(&self, words_sealed: bool, sealed: bool) -> bool {
        if words_sealed {
            self.has_words() || !sealed && self.form() != Afar::Decision
        } else {
            sealed
        }
    }

    /// The same answer with its words left out ([`AnswerBody::has_words`]):
    /// what travels beside them once they are sealed.
    pub fn wordless(&self) -> AnswerBody {
        match self {
            AnswerBody::Text { .. } => AnswerBody::Text {
                text: String::new(),
            },
            AnswerBody::Decision { decision, .. } => AnswerBody::Decision {
                decision: decision.clone(),
                message: None,
            },
            AnswerBody::Choices { .. } => AnswerBody::Choices {
                choices: Vec::new(),
            },
        }
    }

    /// A denial's message as one line, none when nothing is left of it;
    /// the rest as it is. Applied where the words are read: the Worker for
    /// an answer in the clear, the agent's machine for a sealed one.
    pub fn tidied(self) -> AnswerBody {
        match self {
            AnswerBody::Decision { decision, message } => AnswerBody::Decision {
                decision,
                message: message
                    .map(|m| crate::text::line(&m))
                    .filter(|m| !m.is_empty()),
            },
            other => other,
        }
    }

    /// For a person: what was answered ("allow", "deny", "SQLite; Login, Search").
    pub fn summary(&self) -> String {
        match self {
            AnswerBody::Text { text } => text.clone(),
            AnswerBody::Decision { decision, .. } => decision.as_str().to_owned(),
            AnswerBody::Choices { choices } => choices
                .iter()
                .map(|c| c.join(", "))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }
}

/// The digest of a request: SHA-256 of the tool's name and its input as
/// canonical JSON (object keys sorted at every depth), in hex. The same tool
/// with the same input gives the same digest on any machine, whatever order
/// the CLI wrote its keys in.
pub fn digest(tool: &str, input: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(&Value::String(tool.to_owned()), &mut canonical);
    canonical.push('\n');
    write_canonical(input, &mut canonical);
    let hash = Sha256::digest(canonical.as_bytes());
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The id of the lasting choice that applies `suggestion`: `keep-` and its
/// [`digest`], whole. Any machine finds the same id for the same
/// suggestion, whatever order its keys came in ([`crate::lasting`]).
pub fn lasting_id(suggestion: &Value) -> String {
    format!("keep-{}", digest("lasting", suggestion))
}

/// Whether `id` could be one of [`lasting_id`]'s.
pub fn is_lasting_id(id: &str) -> bool {
    id.strip_prefix("keep-").is_some_and(is_digest)
}

/// Whether `digest` could be one of [`digest`]'s: 64 lower-case hex digits.
pub fn is_digest(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Why a question of `kind` asked by `cli` cannot be answered from afar, in
/// one sentence for its card, when its reporter said it takes nothing.
pub fn why_not(cli: Cli, kind: Kind) -> &'static str {
    match kind {
        Kind::Reply => "answer it in the agent's terminal: it is not running in tmux",
        _ => (cli.describe().why_not)(kind),
    }
}

/// What the Worker knows of a question when an answer arrives for it.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    pub kind: Kind,
    /// Not closed, and its task live (not revoked, not expired).
    pub open: bool,
    /// What it takes from afar, if anything.
    pub takes: Option<Afar>,
    /// Why it takes nothing, for a person.
    pub why_not: Option<&'a str>,
    /// The digest of its request.
    pub digest: Option<&'a str>,
    pub questions: &'a [DialogQuestion],
    /// The ids of the lasting choices it offers.
    pub lasting: &'a [String],
    /// Whether its words are sealed ([`crate::words`]): then its dialog's
    /// questions are unknown here, and choices are checked against them on
    /// the agent's machine only.
    pub words_sealed: bool,
}

/// An answer as it arrived: its body, and the digest of the request it was
/// made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposed {
    pub body: AnswerBody,
    pub digest: Option<String>,
    /// Its words sealed by the device that made it (`s1.…`,
    /// [`crate::sealed::field::ANSWER`]): an answer to a question whose
    /// words are sealed carries its own so, and the body only its form.
    pub sealed: Option<String>,
}

/// An answer that may be queued: cleaned (a text as the one line to type, a
/// denial's message as one line), with the digest it is bound to (none for
/// a text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    pub body: AnswerBody,
    pub digest: Option<String>,
    /// Its sealed words, as they came.
    pub sealed: Option<String>,
}

/// Whether `answer` may be queued for `question`, and in what form: every
/// rule the Worker applies before it writes anything, in order: the
/// question is open; it takes an answer from afar at all; the answer is of
/// its form and fits its dialog; a decision or choices carry the digest of
/// the very request the question shows; a text is one line that is no
/// command.
pub fn admit(question: &Asked, answer: Proposed) -> Result<Admitted, Refusal> {
    if !question.open {
        return Err(Refusal::Closed);
    }
    if question.takes.is_none() {
        let why = question.why_not.unwrap_or_default().to_owned();
        return Err(match question.kind {
            Kind::Reply => Refusal::NotAnswerable(why),
            kind => Refusal::AnswerInTerminal(kind, why),
        });
    }
    // A sealed question's answer carries its words sealed (a decision may
    // have none), and none beside them; a question in the clear takes
    // answers in the clear: its machine may hold no key to open them.
    if answer
        .body
        .words_out_of_place(question.words_sealed, answer.sealed.is_some())
    {
        return Err(Refusal::WordsInTheClear);
    }
    // Sealed words are checked where they open: the agent's machine applies
    // the same rules before it types or hands anything on.
    let questions = (!question.words_sealed).then_some(question.questions);
    if let Some(why) = check(&answer.body, question.kind, question.takes, questions) {
        return Err(Refusal::WrongAnswer(why));
    }
    check_lasting(question, &answer.body)?;
    let sealed = answer.sealed;
    match answer.body {
        AnswerBody::Text { text } if sealed.is_some() => Ok(Admitted {
            body: AnswerBody::Text { text },
            digest: None,
            sealed,
        }),
        AnswerBody::Text { text } => Ok(Admitted {
            body: AnswerBody::Text {
                text: crate::answer::check(&text).map_err(Refusal::RefusedAnswer)?,
            },
            digest: None,
            sealed: None,
        }),
        body => {
            let bound = question
                .digest
                .filter(|d| answer.digest.as_deref() == Some(*d))
                .ok_or(Refusal::Changed)?;
            Ok(Admitted {
                body: body.tidied(),
                digest: Some(bound.to_owned()),
                sealed,
            })
        }
    }
}

/// A lasting choice is one the question offers.
fn check_lasting(question: &Asked, body: &AnswerBody) -> Result<(), Refusal> {
    match body {
        AnswerBody::Decision {
            decision: Verdict::Lasting(id),
            ..
        } if !question.lasting.contains(id) => Err(Refusal::NotOffered),
        _ => Ok(()),
    }
}

/// Why `body` cannot answer a question of `kind` that takes `takes`, with
/// its dialog's `questions` (`None` when they are sealed, so unknown here);
/// `None` when it can. Pure: the Worker applies it before it queues
/// anything.
pub fn check(
    body: &AnswerBody,
    kind: Kind,
    takes: Option<Afar>,
    questions: Option<&[DialogQuestion]>,
) -> Option<String> {
    let form = body.form();
    if !form.answers(kind) {
        return Some(format!(
            "a {kind} is not answered with {}",
            match form {
                Afar::Text => "a text",
                Afar::Decision => "a decision",
                Afar::Choices => "choices",
            }
        ));
    }
    if takes != Some(form) {
        return Some("this question cannot be answered from afar".into());
    }
    match body {
        AnswerBody::Decision { message, .. } => message
            .as_ref()
            .filter(|m| m.chars().count() > MAX_TYPED_CHARS)
            .map(|_| format!("a denial's message is at most {MAX_TYPED_CHARS} characters")),
        AnswerBody::Choices { choices } => questions.and_then(|qs| check_choices(choices, qs)),
        AnswerBody::Text { .. } => None,
    }
}

/// Why `choices` do not answer a dialog that asks `questions`; `None` when
/// they do: one list a question, one choice where it takes one, its own
/// options, and a typed answer only where it takes one. The Worker applies
/// it where it can read the dialog, and the waiter on the agent's machine
/// always, against its own.
pub fn check_choices(choices: &[Vec<String>], questions: &[DialogQuestion]) -> Option<String> {
    if choices.len() != questions.len() {
        return Some(format!(
            "this dialog asks {} question(s): give one list of choices for each",
            questions.len()
        ));
    }
    for (i, (chosen, q)) in choices.iter().zip(questions).enumerate() {
        let n = i + 1;
        if chosen.is_empty() {
            return Some(format!("question {n} has no choice"));
        }
        if chosen.len() > 1 && !q.multi_select {
            return Some(format!("question {n} takes one choice"));
        }
        let typed: Vec<&String> = chosen
            .iter()
            .filter(|c| !q.options.iter().any(|o| &o.label == *c))
            .collect();
        if !typed.is_empty() && !q.other {
            return Some(format!("question {n} takes only its own options"));
        }
        if typed.len() > 1 {
            return Some(format!("question {n} takes one typed answer at most"));
        }
        if typed.iter().any(|t| {
            let line = crate::text::line(t);
            line.is_empty() || line.chars().count() > MAX_TYPED_CHARS || &line != *t
        }) {
            return Some(format!(
                "question {n}'s typed answer must be one visible line of at most {MAX_TYPED_CHARS} characters"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn words_are_out_of_place_in_the_clear_for_a_sealed_question_and_sealed_for_a_clear_one() {
        let text = |t: &str| AnswerBody::Text { text: t.into() };
        let deny = |m: Option<&str>| AnswerBody::Decision {
            decision: Verdict::Deny,
            message: m.map(Into::into),
        };
        let allow = AnswerBody::Decision {
            decision: Verdict::Allow,
            message: None,
        };
        let none = AnswerBody::Choices { choices: vec![] };
        // A sealed question: words only sealed, and a reply or choices
        // always with their seal; a bare decision needs none.
        assert!(text("yes").words_out_of_place(true, false));
        assert!(
            text("yes").words_out_of_place(true, true),
            "none beside the seal"
        );
        assert!(!text("").words_out_of_place(true, true));
        assert!(text("").words_out_of_place(true, false));
        assert!(deny(Some("not now")).words_out_of_place(true, false));
        assert!(!deny(None).words_out_of_place(true, true));
        assert!(!allow.words_out_of_place(true, false));
        assert!(none.words_out_of_place(true, false));
        assert!(!none.words_out_of_place(true, true));
        // A question in the clear: no seal at all.
        assert!(!text("yes").words_out_of_place(false, false));
        assert!(text("").words_out_of_place(false, true));
        assert!(!allow.words_out_of_place(false, false));
    }

    fn q(labels: &[&str], multi: bool, other: bool) -> DialogQuestion {
        DialogQuestion {
            question: "Which?".into(),
            header: String::new(),
            options: labels
                .iter()
                .map(|l| QuestionOption {
                    label: (*l).into(),
                    description: None,
                })
                .collect(),
            multi_select: multi,
            other,
        }
    }

    #[test]
    fn a_digest_is_the_request_whatever_the_order_of_its_keys() {
        let a = digest(
            "Bash",
            &json!({"command": "rm -rf build", "description": "Clean"}),
        );
        let b = digest(
            "Bash",
            &json!({"description": "Clean", "command": "rm -rf build"}),
        );
        assert_eq!(a, b);
        assert!(is_digest(&a));
        assert_ne!(
            a,
            digest(
                "Bash",
                &json!({"command": "rm -rf /", "description": "Clean"})
            )
        );
        assert_ne!(
            a,
            digest(
                "Write",
                &json!({"command": "rm -rf build", "description": "Clean"})
            )
        );
        // Nested too, and arrays keep their order.
        let n1 = digest("T", &json!({"a": [{"y": 1, "x": 2}], "b": null}));
        let n2 = digest("T", &json!({"b": null, "a": [{"x": 2, "y": 1}]}));
        assert_eq!(n1, n2);
        assert_ne!(
            n1,
            digest("T", &json!({"a": [{"x": 1, "y": 2}], "b": null}))
        );
        assert!(!is_digest("abc") && !is_digest(&"G".repeat(64)));
    }

    #[test]
    fn the_three_forms_read_from_their_json() {
        let text: AnswerBody = serde_json::from_value(json!({"text": "yes"})).unwrap();
        assert_eq!(text.form(), Afar::Text);
        let deny: AnswerBody =
            serde_json::from_value(json!({"decision": "deny", "message": "not now"})).unwrap();
        assert_eq!(
            deny,
            AnswerBody::Decision {
                decision: Verdict::Deny,
                message: Some("not now".into())
            }
        );
        let choose: AnswerBody =
            serde_json::from_value(json!({"choices": [["OAuth"], ["Login", "Search"]]})).unwrap();
        assert_eq!(choose.summary(), "OAuth; Login, Search");
        let always: AnswerBody = serde_json::from_value(json!({"decision": "always"})).unwrap();
        assert_eq!(
            always.summary(),
            "always",
            "read, and refused unless offered"
        );
        assert!(serde_json::from_value::<AnswerBody>(json!({"decision": ""})).is_err());
        assert!(serde_json::from_value::<AnswerBody>(json!({"decision": "k".repeat(81)})).is_err());
        assert!(serde_json::from_value::<AnswerBody>(json!({"choices": "OAuth"})).is_err());
    }

    #[test]
    fn an_answer_must_fit_its_question() {
        let allow = AnswerBody::Decision {
            decision: Verdict::Allow,
            message: None,
        };
        assert_eq!(
            check(&allow, Kind::Permission, Some(Afar::Decision), Some(&[])),
            None
        );
        assert!(
            check(&allow, Kind::Permission, None, Some(&[])).is_some(),
            "takes nothing"
        );
        assert!(check(&allow, Kind::Dialog, Some(Afar::Choices), Some(&[])).is_some());
        let text = AnswerBody::Text { text: "y".into() };
        assert!(check(&text, Kind::Permission, Some(Afar::Decision), Some(&[])).is_some());

        let qs = [
            q(&["SQLite", "Postgres"], false, true),
            q(&["Login", "Search"], true, false),
        ];
        let choose = |c: serde_json::Value| AnswerBody::Choices {
            choices: serde_json::from_value(c).unwrap(),
        };
        let ok = check(
            &choose(json!([["SQLite"], ["Login", "Search"]])),
            Kind::Dialog,
            Some(Afar::Choices),
            Some(&qs),
        );
        assert_eq!(ok, None);
        assert_eq!(
            check(
                &choose(json!([["a mix of both"], ["Login"]])),
                Kind::Dialog,
                Some(Afar::Choices),
                Some(&qs)
            ),
            None,
            "a typed answer where the question takes one"
        );
        for bad in [
            json!([["SQLite"]]),
            json!([["SQLite", "Postgres"], ["Login"]]),
            json!([["SQLite"], ["Export"]]),
            json!([[], ["Login"]]),
            json!([["one", "two"], ["Login"]]),
            json!([["line\nbreak"], ["Login"]]),
        ] {
            assert!(
                check(
                    &choose(bad.clone()),
                    Kind::Dialog,
                    Some(Afar::Choices),
                    Some(&qs)
                )
                .is_some(),
                "{bad}"
            );
            assert_eq!(
                check(
                    &choose(bad.clone()),
                    Kind::Dialog,
                    Some(Afar::Choices),
                    None
                ),
                None,
                "sealed: checked on the agent's machine only"
            );
        }
    }

    fn asked<'a>(kind: Kind, takes: Option<Afar>, digest: Option<&'a str>) -> Asked<'a> {
        Asked {
            kind,
            open: true,
            takes,
            why_not: Some("why"),
            digest,
            questions: &[],
            lasting: &[],
            words_sealed: false,
        }
    }

    fn decide(verdict: Verdict, digest: Option<&str>) -> Proposed {
        Proposed {
            body: AnswerBody::Decision {
                decision: verdict,
                message: None,
            },
            digest: digest.map(str::to_owned),
            sealed: None,
        }
    }

    #[test]
    fn admit_refuses_a_closed_question_first() {
        let mut q = asked(Kind::Permission, Some(Afar::Decision), Some("d1"));
        q.open = false;
        assert_eq!(
            admit(&q, decide(Verdict::Allow, Some("d1"))).unwrap_err(),
            Refusal::Closed
        );
    }

    #[test]
    fn admit_refuses_what_takes_nothing_with_its_reason() {
        let q = asked(Kind::Permission, None, None);
        let r = admit(&q, decide(Verdict::Allow, Some("d1"))).unwrap_err();
        assert_eq!(r.code(), "answer_in_terminal");
        let q = asked(Kind::Reply, None, None);
        let text = Proposed {
            body: AnswerBody::Text { text: "y".into() },
            digest: None,
            sealed: None,
        };
        assert_eq!(admit(&q, text).unwrap_err().code(), "not_answerable");
    }

    #[test]
    fn admit_binds_a_decision_to_the_digest_of_the_request_shown() {
        let q = asked(Kind::Permission, Some(Afar::Decision), Some("d1"));
        for other in [None, Some("d2")] {
            assert_eq!(
                admit(&q, decide(Verdict::Allow, other)).unwrap_err(),
                Refusal::Changed
            );
        }
        let ok = admit(&q, decide(Verdict::Allow, Some("d1"))).unwrap();
        assert_eq!(ok.digest.as_deref(), Some("d1"));
        // A question with no digest binds nothing: nothing is admitted.
        let q = asked(Kind::Permission, Some(Afar::Decision), None);
        assert_eq!(
            admit(&q, decide(Verdict::Allow, Some("d1"))).unwrap_err(),
            Refusal::Changed
        );
    }

    #[test]
    fn admit_takes_only_a_lasting_choice_the_question_offers() {
        let offered = ["keep-0123456789abcdef".to_owned()];
        let mut q = asked(Kind::Permission, Some(Afar::Decision), Some("d1"));
        q.lasting = &offered;
        let keep = |id: &str| Proposed {
            body: AnswerBody::Decision {
                decision: Verdict::Lasting(id.into()),
                message: None,
            },
            digest: Some("d1".into()),
            sealed: None,
        };
        let ok = admit(&q, keep(&offered[0])).unwrap();
        assert_eq!(ok.body.summary(), offered[0]);
        for other in ["keep-fedcba9876543210", "always"] {
            let r = admit(&q, keep(other)).unwrap_err();
            assert_eq!((r.code(), r.status()), ("not_offered", 409));
        }
        // Bound to the request like an allow.
        let mut stale = keep(&offered[0]);
        stale.digest = Some("d2".into());
        assert_eq!(admit(&q, stale).unwrap_err(), Refusal::Changed);
    }

    #[test]
    fn a_sealed_questions_answer_carries_its_words_sealed_and_none_beside_them() {
        let mut reply = asked(Kind::Reply, Some(Afar::Text), None);
        let text = |text: &str, sealed: Option<&str>| Proposed {
            body: AnswerBody::Text { text: text.into() },
            digest: None,
            sealed: sealed.map(str::to_owned),
        };
        // In the clear: taken only for a question in the clear.
        assert!(admit(&reply, text("yes", None)).is_ok());
        let r = admit(&reply, text("", Some("s1.1.n.c"))).unwrap_err();
        assert_eq!((r.code(), r.status()), ("words_in_the_clear", 400));
        reply.words_sealed = true;
        for (words, sealed) in [("yes", Some("s1.1.n.c")), ("yes", None), ("", None)] {
            let r = admit(&reply, text(words, sealed)).unwrap_err();
            assert_eq!(r.code(), "words_in_the_clear", "{words:?} {sealed:?}");
        }
        // Its words unread here: the agent's machine checks them.
        let ok = admit(&reply, text("", Some("s1.1.n.c"))).unwrap();
        assert_eq!(ok.sealed.as_deref(), Some("s1.1.n.c"));
        // A decision: its message sealed or none, bound like any other.
        let mut q = asked(Kind::Permission, Some(Afar::Decision), Some("d1"));
        q.words_sealed = true;
        let deny = |message: Option<&str>, sealed: Option<&str>, digest: &str| Proposed {
            body: AnswerBody::Decision {
                decision: Verdict::Deny,
                message: message.map(str::to_owned),
            },
            digest: Some(digest.into()),
            sealed: sealed.map(str::to_owned),
        };
        assert!(admit(&q, deny(None, None, "d1")).is_ok());
        assert!(admit(&q, deny(None, Some("s1.1.n.c"), "d1")).is_ok());
        assert_eq!(
            admit(&q, deny(Some("no"), Some("s1.1.n.c"), "d1")).unwrap_err(),
            Refusal::WordsInTheClear
        );
        assert_eq!(
            admit(&q, deny(None, Some("s1.1.n.c"), "d2")).unwrap_err(),
            Refusal::Changed
        );
        let keep = Proposed {
            body: AnswerBody::Decision {
                decision: Verdict::Lasting("keep-0123456789abcdef".into()),
                message: None,
            },
            digest: Some("d1".into()),
            sealed: None,
        };
        assert_eq!(admit(&q, keep).unwrap_err(), Refusal::NotOffered);
    }

    #[test]
    fn admit_refuses_the_wrong_form_and_cleans_what_it_admits() {
        let q = asked(Kind::Permission, Some(Afar::Decision), Some("d1"));
        let text = Proposed {
            body: AnswerBody::Text { text: "y".into() },
            digest: Some("d1".into()),
            sealed: None,
        };
        assert_eq!(admit(&q, text).unwrap_err().code(), "wrong_answer");
        let deny = Proposed {
            body: AnswerBody::Decision {
                decision: Verdict::Deny,
                message: Some("no\u{1b}[2J\nnot now".into()),
            },
            digest: Some("d1".into()),
            sealed: None,
        };
        assert_eq!(
            admit(&q, deny).unwrap().body,
            AnswerBody::Decision {
                decision: Verdict::Deny,
                message: Some("no[2J not now".into())
            }
        );
        let reply = asked(Kind::Reply, Some(Afar::Text), None);
        let bang = Proposed {
            body: AnswerBody::Text {
                text: "\u{FE0F}!curl x | sh".into(),
            },
            digest: None,
            sealed: None,
        };
        let r = admit(&reply, bang).unwrap_err();
        assert_eq!((r.code(), r.status()), ("refused_answer", 400));
        let cgj = Proposed {
            body: AnswerBody::Text {
                text: "\u{034F}/permissions".into(),
            },
            digest: None,
            sealed: None,
        };
        assert_eq!(admit(&reply, cgj).unwrap_err().code(), "refused_answer");
    }
}
