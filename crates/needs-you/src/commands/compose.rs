//! An answer as `needs-you answer` sends it, composed apart from the prompt,
//! the files and the network: whether its words may go at all
//! ([`words_may_go`]), and the request's body with the statement the signer
//! signs for it, a sealed question's words sealed beside that statement
//! ([`compose`]). What it reads (the question as shown, the digest of the
//! card built here, the statement's id and time, the sealing) is passed in.

use needs_you_core::afar::{Afar, AnswerBody, Refusal};
use needs_you_core::api::Question;
use needs_you_core::signed::{self, Statement};
use serde_json::{json, Value};

use super::cards::Unopened;
use crate::fail::{exit, Fail};

/// Why words are not sent to a question in the clear.
pub const IN_THE_CLEAR: &str = "nothing was sent: this question is listed in the clear (its machine holds no content key, or so the server says), and what you write goes only sealed: answer it in the agent's terminal, or log that machine in with the line `needs-you pair` prints";

/// Whether `body` may go to `q` from a command line logged in `under_owner`:
/// what the person writes or chooses goes sealed from such a command line,
/// or not at all. To a question the list says is in the clear (its machine
/// holds no key, or a server says so of a sealed one to read the reply) it
/// would go readable. Judged by the owner pinned here, never by what the
/// server says of this device's keys: every device `pair` vouches for is
/// given the content key. Else why not, said as the Worker would say it when
/// the list says the question takes no answer from afar anyway.
pub fn words_may_go(q: &Question, body: &AnswerBody, under_owner: bool) -> Result<(), Fail> {
    if q.sealed || !body.has_words() || !under_owner {
        return Ok(());
    }
    let why = match &q.why_not {
        Some(why) if q.answer_from_afar.is_none() => {
            Refusal::AnswerInTerminal(q.kind, why.clone()).message()
        }
        _ if body.form() == Afar::Decision => {
            format!("{IN_THE_CLEAR}; a bare allow or denial still goes")
        }
        _ => IN_THE_CLEAR.to_owned(),
    };
    Err(Fail::new(exit::REFUSED, why))
}

/// Who signs, and what makes the statement new: its random `id`, and now.
pub struct Signing<'a> {
    pub owner: &'a str,
    pub id: String,
    pub now_ms: i64,
}

/// The body of `POST /v1/questions/{id}/answers` for `body`, an answer to
/// `q` as the list shows it now, and the statement to sign for it when
/// there is a `signing`: bound to the machine's open of it (`session`,
/// `open_seq`) and, for a decision or choices, to the `digest` of the card
/// built here from its request; a text as the line that would be typed, a
/// denial's message as the one line the Worker would keep. A sealed
/// question's words are sealed by `seal` (giving the wordless form and the
/// sealed words), signed by their hash, and the server gets the form alone.
pub fn compose(
    q: &Question,
    body: &AnswerBody,
    digest: Option<String>,
    signing: Option<Signing>,
    seal: impl FnOnce(&AnswerBody) -> Result<(AnswerBody, String), Unopened>,
) -> Result<(Value, Option<Statement>), Unopened> {
    let with_digest = |mut request: Value| {
        if let Some(d) = &digest {
            request["digest"] = json!(d);
        }
        request
    };
    let mut request = with_digest(serde_json::to_value(body).unwrap_or_default());
    let Some(signing) = signing else {
        return Ok((request, None));
    };
    let answer = match body {
        AnswerBody::Text { text } => AnswerBody::Text {
            text: needs_you_core::answer::check(text).unwrap_or_else(|_| text.clone()),
        },
        other => other.clone().tidied(),
    };
    let mut statement = Statement {
        v: signed::VERSION,
        owner: signing.owner.to_owned(),
        id: signing.id,
        question_id: q.question_id.clone(),
        session: q.session.clone(),
        open_seq: q.open_seq,
        digest: digest.clone(),
        answer,
        sealed_hash: None,
        expires_at: signing.now_ms + signed::LIFETIME_MS,
    };
    if q.sealed && statement.answer.has_words() {
        let (wordless, sealed) = seal(&statement.answer)?;
        request = with_digest(serde_json::to_value(&wordless).unwrap_or_default());
        request["sealed"] = json!(&sealed);
        statement.v = signed::SEALED_VERSION;
        statement.answer = wordless;
        statement.sealed_hash = Some(signed::sealed_hash(&sealed));
    }
    Ok((request, Some(statement)))
}

#[cfg(test)]
mod tests {
    use needs_you_core::afar::Verdict;
    use needs_you_core::Kind;

    use super::*;

    fn question(kind: &str, sealed: bool) -> Question {
        serde_json::from_value(
            json!({"question_id": "q_1", "task_id": "t", "task_name": "api",
            "session": "s1", "cli": "claude-code", "kind": kind, "text": "Run make?",
            "options": [], "opened_at": 1, "notified_at": null, "closed_at": null,
            "close_reason": null, "open_seq": 7, "sealed": sealed, "answer_from_afar": "decision"}),
        )
        .unwrap()
    }

    fn deny(message: Option<&str>) -> AnswerBody {
        AnswerBody::Decision {
            decision: Verdict::Deny,
            message: message.map(str::to_owned),
        }
    }

    fn signing() -> Option<Signing<'static>> {
        Some(Signing {
            owner: "owner-fp",
            id: "st-id".into(),
            now_ms: 1_000,
        })
    }

    fn no_seal(_: &AnswerBody) -> Result<(AnswerBody, String), Unopened> {
        panic!("nothing to seal")
    }

    #[test]
    fn words_go_to_a_question_in_the_clear_only_from_a_command_line_under_no_owner() {
        // Refused with its exit code, else what the refusal says.
        let may = |q: &Question, body: &AnswerBody, under_owner: bool| {
            words_may_go(q, body, under_owner).map_err(|f| (f.code, f.message))
        };
        let clear = question("permission", false);
        let said = deny(Some("not now"));
        let (code, why) = may(&clear, &said, true).unwrap_err();
        assert_eq!(code, exit::REFUSED);
        assert!(
            why.starts_with(IN_THE_CLEAR) && why.ends_with("a bare allow or denial still goes")
        );
        let text = AnswerBody::Text { text: "yes".into() };
        assert_eq!(
            may(&question("reply", false), &text, true),
            Err((exit::REFUSED, IN_THE_CLEAR.into()))
        );
        assert_eq!(may(&clear, &deny(None), true), Ok(()), "a bare denial");
        assert_eq!(
            may(&question("permission", true), &said, true),
            Ok(()),
            "sealed"
        );
        assert_eq!(may(&clear, &said, false), Ok(()), "no owner pinned here");
        let mut terminal_only = clear.clone();
        terminal_only.answer_from_afar = None;
        terminal_only.why_not = Some("its agent takes it in its terminal only".into());
        let in_terminal = Refusal::AnswerInTerminal(
            Kind::Permission,
            "its agent takes it in its terminal only".into(),
        );
        assert_eq!(
            may(&terminal_only, &said, true),
            Err((exit::REFUSED, in_terminal.message()))
        );
    }

    #[test]
    fn an_unsigned_answer_is_its_body_and_its_digest() {
        let (request, statement) = compose(
            &question("permission", false),
            &deny(None),
            Some("d1".into()),
            None,
            no_seal,
        )
        .unwrap();
        assert_eq!(request, json!({"decision": "deny", "digest": "d1"}));
        assert!(statement.is_none());
    }

    #[test]
    fn the_statement_binds_the_open_the_digest_and_the_words_as_they_would_go() {
        let q = question("permission", false);
        let long = format!("  not   now  {}", "x".repeat(2_000));
        let (request, statement) = compose(
            &q,
            &deny(Some(&long)),
            Some("d1".into()),
            signing(),
            no_seal,
        )
        .unwrap();
        let s = statement.unwrap();
        assert_eq!(
            (
                s.v,
                s.owner.as_str(),
                s.id.as_str(),
                s.question_id.as_str(),
                s.session.as_str(),
                s.open_seq
            ),
            (signed::VERSION, "owner-fp", "st-id", "q_1", "s1", 7)
        );
        assert_eq!(
            (s.digest.as_deref(), s.expires_at),
            (Some("d1"), 1_000 + signed::LIFETIME_MS)
        );
        assert_eq!(
            s.answer,
            deny(Some(&long)).tidied(),
            "the one line the Worker keeps"
        );
        assert_eq!(request["digest"], "d1");
        assert!(request.get("sealed").is_none());
        // A text, as the line that would be typed.
        let reply = question("reply", false);
        let text = AnswerBody::Text {
            text: "yes, go on\n".into(),
        };
        let (_, s) = compose(&reply, &text, None, signing(), no_seal).unwrap();
        assert_eq!(
            s.unwrap().answer,
            AnswerBody::Text {
                text: "yes, go on".into()
            }
        );
    }

    #[test]
    fn a_sealed_questions_words_go_sealed_and_signed_by_their_hash() {
        let q = question("permission", true);
        let said = deny(Some("not with AKIA-secret"));
        let (request, statement) = compose(&q, &said, Some("d1".into()), signing(), |answer| {
            assert_eq!(answer, &said, "the words sealed are the ones signed");
            Ok((answer.wordless(), "sealed-words".into()))
        })
        .unwrap();
        let s = statement.unwrap();
        assert_eq!(s.v, signed::SEALED_VERSION);
        assert_eq!(s.sealed_hash, Some(signed::sealed_hash("sealed-words")));
        assert_eq!(s.answer, said.wordless());
        assert_eq!(
            request,
            json!({"decision": "deny", "digest": "d1", "sealed": "sealed-words"})
        );
        assert!(
            !request.to_string().contains("AKIA"),
            "no word of it in the clear"
        );
        // A bare allow has nothing to seal, and a failed seal sends nothing.
        let allow = AnswerBody::Decision {
            decision: Verdict::Allow,
            message: None,
        };
        let (_, s) = compose(&q, &allow, Some("d1".into()), signing(), no_seal).unwrap();
        assert_eq!(s.unwrap().v, signed::VERSION);
        let failed = compose(&q, &said, None, signing(), |_| Err("no key".into()));
        assert_eq!(failed.unwrap_err(), Unopened("no key".into()));
    }
}
