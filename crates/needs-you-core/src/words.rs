//! What of a question is sealed on the agent's machine before it leaves it:
//! its words.
//!
//! The reporter's sender takes them out of an open report ([`take`]) and
//! seals them, as the field `question` in the scope of that open
//! ([`crate::sealed::open_scope`]), under the owner's content key. What
//! travels in the clear is what the server needs to keep the list, ring
//! and route answers: ids, the CLI, the kind, the state, times, `seq`s, the
//! request's digest, what it takes from afar, its terminal's kind and host
//! (its folder and tmux pane, whose session may be named after the task,
//! are words; its host is sealed as well, for a device to show the
//! machine's own),
//! and a permission's lasting choices by id and scope, each with its own
//! words sealed apart ([`RuleWords`], as the field `rule`, scoped by the
//! choice's id) so that a rule granted on it is recorded, and opened where
//! it is listed, without the question. Words that carry a request are
//! sealed without the card built from it ([`Words::without_card`]): a card
//! may be many times its request (every hidden character written out), and
//! every device builds it again from the request ([`Words::with_card`]). A
//! device opens the words and puts them back ([`Words::restore`]) before it
//! draws a card, and builds the card of what takes a decision or choices
//! from the opened request, as it does for any question.
//!
//! An answer to such a question seals its words likewise, on the device that
//! makes it: its text, a denial's message, its choices, bound by their hash
//! to the statement the device signs; only the agent's machine opens them
//! ([`restore_answer`]).
//!

use serde::{Deserialize, Serialize};

use crate::afar::{AnswerBody, DialogQuestion};
use crate::api;
use crate::classify::card;
use crate::kinds::{Kind, QuestionOption};
use crate::lasting::Offer;
use crate::report::Report;
use crate::request::Request;

/// A question's words, as they are sealed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Words {
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<QuestionOption>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<DialogQuestion>,
    /// The request it takes an answer from afar for, if it takes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Request>,
    /// The folder its agent runs in.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cwd: String,
    /// Its tmux pane, `session:window.pane`: a session is often named
    /// after its task or folder (`needs-you run --tmux` names it so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Its machine's host name, sealed too though the list keeps it (to
    /// group cards by): a device shows the host its machine sealed, so
    /// that where an answer lands, folder, pane and host, is the machine's
    /// word and not the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// For words that carry a request, the kind of question their machine
    /// reported, which its card is built as ([`Words::with_card`]), sealed
    /// with the words: the kind the list says is the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
}

/// How much of a card's text sealed words keep beside its request
/// ([`Words::without_card`]).
pub const START_CHARS: usize = 200;

/// A lasting choice's words, sealed apart from its question's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleWords {
    pub label: String,
    pub rule: String,
}

/// What [`take`] took out of an open report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// The report with no words left: empty text, options and questions, no
    /// request, no folder, no tmux pane.
    pub wordless: Report,
    pub words: Words,
    /// The lasting choices it offers, with their words, to be sealed one by
    /// one.
    pub lasting: Vec<Offer>,
}

/// The words of `report`, an open whose card was built
/// ([`crate::classify::card::built`]), taken out of it; `None` for a close.
pub fn take(report: Report) -> Option<Taken> {
    let Report::Open {
        cli,
        session,
        seq,
        kind,
        text,
        options,
        mut terminal,
        takes,
        questions,
        request,
        lasting,
        ..
    } = report
    else {
        return None;
    };
    let cwd = terminal
        .as_mut()
        .map(|t| std::mem::take(&mut t.cwd))
        .unwrap_or_default();
    let target = terminal.as_mut().and_then(|t| t.target.take());
    // Even empty (a machine whose name did not read): the list's would
    // then stand in its place.
    let host = terminal.as_ref().map(|t| t.host.clone());
    Some(Taken {
        wordless: Report::Open {
            cli,
            session,
            seq,
            kind,
            text: String::new(),
            options: vec![],
            terminal,
            takes,
            questions: vec![],
            request: None,
            lasting: vec![],
            sealed: None,
        },
        words: Words {
            text,
            options,
            questions,
            kind: request.is_some().then_some(kind),
            request: request.map(|r| *r),
            cwd,
            target,
            host,
        },
        lasting,
    })
}

/// `offer`'s words, as they are sealed apart from its question's: the
/// sender then sends the offer with no label and these, sealed, as its rule.
pub fn rule_words(offer: &Offer) -> RuleWords {
    RuleWords {
        label: offer.label.clone(),
        rule: offer.rule.clone().unwrap_or_default(),
    }
}

/// A question's options as a notification lists them, one a line.
pub fn option_lines(options: &[QuestionOption]) -> String {
    options
        .iter()
        .map(|o| format!("• {}", o.label))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The answer a statement signed, its sealed words opened
/// ([`crate::sealed::field::ANSWER`]: the whole answer as JSON) and read
/// back: `None` unless they are an answer of the very form, and decision,
/// that the statement carries beside them ([`AnswerBody::wordless`]), with
/// words in it. A denial's message is made one line, as the Worker does of
/// one in the clear ([`AnswerBody::tidied`]).
pub fn restore_answer(wordless: &AnswerBody, opened: &[u8]) -> Option<AnswerBody> {
    let answer: AnswerBody = serde_json::from_slice(opened).ok()?;
    (answer.has_words() && answer.wordless() == *wordless).then(|| answer.tidied())
}

impl Words {
    /// What a notification shows of them: the text, then the options, cut
    /// to [`crate::sealed::MAX_SUMMARY_BYTES`].
    pub fn summary(&self) -> String {
        let options = option_lines(&self.options);
        let whole = if options.is_empty() {
            self.text.clone()
        } else {
            format!("{}\n{options}", self.text)
        };
        let mut chars = whole.chars().count();
        loop {
            let cut = crate::text::truncate_chars(&whole, chars);
            if cut.len() <= crate::sealed::MAX_SUMMARY_BYTES {
                return cut;
            }
            chars = chars * crate::sealed::MAX_SUMMARY_BYTES / cut.len();
        }
    }

    /// The words as they are sealed: those of a question that carries its
    /// request go without the card built from it (its options and
    /// questions, and its text but for its first [`START_CHARS`] characters,
    /// for a reader that does not build it), which [`Words::with_card`]
    /// builds again on the device. So what is sealed is the request, the
    /// folder and a few words more, and a card that writes out every hidden
    /// character of its request cannot push them past what a report may be.
    pub fn without_card(self) -> Words {
        match self.request {
            Some(_) => Words {
                text: crate::text::truncate_chars(&self.text, START_CHARS),
                options: Vec::new(),
                questions: Vec::new(),
                ..self
            },
            None => self,
        }
    }

    /// The words as a device shows them: the card of the request they carry
    /// built here ([`card::of`]) as the kind of question their machine
    /// sealed with them (`listed`, the kind the list says, only for words
    /// that name none), as their sender built it before it sealed them
    /// ([`card::built`] keeps the request only of a card it shows whole);
    /// words with no request as they were sealed.
    pub fn with_card(self, listed: Kind) -> Words {
        match &self.request {
            Some(request) => {
                let card = card::of(self.kind.unwrap_or(listed), request);
                Words {
                    text: card.text,
                    options: card.options,
                    questions: card.questions,
                    ..self
                }
            }
            None => self,
        }
    }

    /// Puts the words back into `q`, as its reporter saw them: words that
    /// carry a request once their card is built ([`Words::with_card`]).
    pub fn restore(self, q: &mut api::Question) {
        q.text = self.text;
        q.options = self.options;
        q.questions = self.questions;
        if let Some(t) = q.terminal.as_mut() {
            t.cwd = self.cwd;
            // Words sealed before the pane and host were among them leave
            // the list's.
            if self.target.is_some() {
                t.target = self.target;
            }
            if let Some(host) = self.host {
                t.host = host;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn permission() -> Report {
        let body = json!({"action": "open", "cli": "claude-code", "session": "s", "seq": 3,
            "kind": "permission", "text": "Run it?",
            "terminal": {"kind": "tmux", "host": "box", "cwd": "/srv/secret-project", "target": "a:0.1"},
            "takes": "decision",
            "request": {"tool": "Bash", "input": {"command": "deploy --token hunter2"},
                        "lasting": [{"type": "addRules", "behavior": "allow", "destination": "session",
                                     "rules": [{"toolName": "Bash", "ruleContent": "deploy:*"}]}]}});
        let mut body = body;
        let request: Request = serde_json::from_value(body["request"].clone()).unwrap();
        body["digest"] = json!(request.digest());
        crate::classify::card::built(Report::from_value(&body).unwrap())
    }

    #[test]
    fn an_answers_opened_words_are_taken_only_as_the_answer_signed_beside_them() {
        use crate::afar::Verdict;
        let deny = AnswerBody::Decision {
            decision: Verdict::Deny,
            message: Some("not with\nhunter2".into()),
        };
        let wordless = deny.wordless();
        assert!(!serde_json::to_string(&wordless)
            .unwrap()
            .contains("hunter2"));
        let sealed = serde_json::to_vec(&deny).unwrap();
        assert_eq!(
            restore_answer(&wordless, &sealed),
            Some(AnswerBody::Decision {
                decision: Verdict::Deny,
                message: Some("not with hunter2".into())
            })
        );
        // Words of an allow under a signed deny, a text under a decision,
        // or no words at all: refused.
        let allow = AnswerBody::Decision {
            decision: Verdict::Allow,
            message: Some("x".into()),
        };
        assert_eq!(restore_answer(&allow.wordless(), &sealed), None);
        let text = AnswerBody::Text { text: "yes".into() };
        assert_eq!(restore_answer(&text.wordless(), &sealed), None);
        assert_eq!(
            restore_answer(&wordless, &serde_json::to_vec(&wordless).unwrap()),
            None
        );
        assert_eq!(restore_answer(&wordless, b"not json"), None);
        let choices = AnswerBody::Choices {
            choices: vec![vec!["SQLite".into()]],
        };
        assert_eq!(
            restore_answer(&choices.wordless(), &serde_json::to_vec(&choices).unwrap()),
            Some(choices)
        );
    }

    #[test]
    fn taking_the_words_leaves_no_word_of_them_in_the_report() {
        let taken = take(permission()).unwrap();
        let wire = serde_json::to_string(&taken.wordless).unwrap();
        for word in ["hunter2", "secret-project", "deploy", "a:0.1"] {
            assert!(!wire.contains(word), "{word} in {wire}");
        }
        assert!(taken.words.text.contains("hunter2"));
        assert_eq!(taken.words.cwd, "/srv/secret-project");
        assert_eq!(taken.words.target.as_deref(), Some("a:0.1"));
        assert_eq!(taken.words.host.as_deref(), Some("box"));
        assert!(taken.words.request.is_some());
        assert_eq!(taken.lasting.len(), 1);
        assert!(rule_words(&taken.lasting[0]).rule.contains("deploy"));
        // What stays: the digest, what it takes, the terminal's kind and host.
        assert!(wire.contains("\"takes\":\"decision\"") && wire.contains("tmux"));
        assert!(wire.contains("\"host\":\"box\""));
    }

    #[test]
    fn restoring_puts_back_what_was_taken() {
        let taken = take(permission()).unwrap();
        let mut q: api::Question = serde_json::from_value(json!({
            "question_id": "q_1", "task_id": "t", "task_name": "", "session": "s",
            "cli": "claude-code", "kind": "permission", "text": "", "options": [],
            "opened_at": 1, "notified_at": null, "closed_at": null, "close_reason": null,
            "terminal": {"kind": "tmux", "host": "the server's word", "cwd": ""}}))
        .unwrap();
        let text = taken.words.text.clone();
        taken
            .words
            .without_card()
            .with_card(Kind::Permission)
            .restore(&mut q);
        assert_eq!(q.text, text, "the card built again from the request");
        let t = q.terminal.unwrap();
        assert_eq!(
            (t.cwd.as_str(), t.target.as_deref(), t.host.as_str()),
            ("/srv/secret-project", Some("a:0.1"), "box"),
            "the place its machine sealed, not the list's"
        );
    }

    #[test]
    fn words_with_a_request_are_sealed_without_its_card_and_shown_with_it() {
        // A dialog whose card writes out its hidden characters: the card is
        // many times the request.
        let input = json!({"questions": [{"question": format!("DB?{}", "\u{200b}".repeat(500)),
            "header": "DB", "multiSelect": false,
            "options": [{"label": "SQLite"}, {"label": "Postgres", "description": "a server"}]}]});
        let request = Request::new("AskUserQuestion", &input);
        let body = json!({"action": "open", "kind": "dialog", "cli": "claude-code",
            "session": "s", "seq": 1, "text": "", "takes": "choices",
            "digest": request.digest(), "request": request});
        let report = crate::classify::card::built(Report::from_value(&body).unwrap());
        let words = take(report).unwrap().words;
        let sealed = words.clone().without_card();
        assert_eq!(
            (
                sealed.text.chars().count(),
                sealed.options.len(),
                sealed.questions.len()
            ),
            (START_CHARS, 0, 0),
            "the start of its text only"
        );
        assert!(words.text.starts_with(sealed.text.trim_end_matches('…')));
        assert_eq!(sealed.request, words.request);
        let sealed_len = serde_json::to_vec(&sealed).unwrap().len();
        assert!(sealed_len * 4 < serde_json::to_vec(&words).unwrap().len());
        assert_eq!(
            sealed.clone().with_card(Kind::Permission),
            words,
            "built as the kind sealed with it, whatever the list says"
        );
        let unnamed = Words {
            kind: None,
            ..sealed
        };
        assert_eq!(unnamed.with_card(Kind::Dialog).text, words.text);

        // Words that carry no request keep their card: it is all they have.
        let plain = Words {
            text: "Go on?".into(),
            options: vec![QuestionOption {
                label: "yes".into(),
                description: None,
            }],
            questions: vec![],
            request: None,
            cwd: "/w".into(),
            target: None,
            host: None,
            kind: Some(Kind::Dialog),
        };
        assert_eq!(plain.clone().without_card(), plain);
        assert_eq!(plain.clone().with_card(Kind::Dialog), plain);
    }
}
