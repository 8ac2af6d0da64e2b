//! Whether an answer from afar is the owner's, for this machine's own open
//! question: [`admit`], with everything it reads passed in ([`Knows`]), so
//! that neither the server nor anything that speaks on the relay's socket
//! can have the machine type a word or take a decision the owner did not
//! sign. The relay reads what the machine knows, admits, and spends the
//! statement's id after ([`Admitted`]); it checks again before every key.
//!
//! In order, each with its [`Refusal`]: the machine pins an owner
//! (`NotPinned`); the statement is the owner's or a device's it vouches for,
//! fresh ([`verify_as`]); its words come as the machine sent its questions'
//! (`WordsInTheClear`); sealed words are the very ones it signed, by their
//! hash, and open under the content key the machine holds as the answer the
//! statement says (`Unopened`, `WrongAnswer`); it names this machine's own
//! open question of the session, by `seq` and digest, in the answer's form,
//! and a lasting choice only one that question offers (`NotThisRequest`).

use needs_you_core::afar::{Afar, AnswerBody, Refusal, Verdict};
use needs_you_core::relay_messages::Answer;
use needs_you_core::sealed::field;
use needs_you_core::signed::{self, DeviceList, Statement, VERSION};
use needs_you_core::{words, Kind};

use crate::sealing::{self, ContentKeys};
use crate::verify::verify_as;

/// What a machine knows when an answer comes: each read by its relay.
#[derive(Clone, Copy)]
pub struct Knows<'a> {
    /// The owner's fingerprint it was logged in under; none: it takes
    /// nothing from afar.
    pub owner: Option<&'a str>,
    /// The owner's newest device list it has seen, the one the answer
    /// brought already weighed in ([`crate::verify::newest_list`]).
    pub devices: Option<&'a DeviceList>,
    /// Now, in milliseconds since the epoch.
    pub now_ms: i64,
    /// Every version of the content key, on a machine that seals what it
    /// reports; none on one that does not.
    pub keys: Option<&'a ContentKeys>,
    /// The open question of the answer's session there.
    pub asked: Option<&'a Asked>,
}

/// A session's open question, as far as an answer binds to it: what the
/// machine recorded when it reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The session it is open in, as the machine recorded it: the one the
    /// statement must name, whatever session the frame says.
    pub session: String,
    pub kind: Kind,
    /// The `seq` of the report that opened it: a new open has a new one.
    pub seq: u64,
    /// The digest of the request it takes an answer for.
    pub digest: Option<String>,
    /// The ids of the lasting choices its request offers.
    pub lasting: Vec<String>,
}

/// An answer admitted: the one to act on, and the id of the statement it
/// came under, which the caller spends once and for all (a second answer
/// under it is [`Refusal::Spent`]).
#[derive(Debug, PartialEq)]
pub struct Admitted {
    pub answer: Answer,
    pub statement_id: String,
}

/// The answer `frame` brings, if the machine that `knows` what it knows
/// takes it; else why not.
pub fn admit(frame: &Answer, knows: &Knows) -> Result<Admitted, Refusal> {
    let owner = knows.owner.ok_or(Refusal::NotPinned)?;
    let statement: Statement =
        verify_as(owner, frame.signed.as_deref(), knows.devices, knows.now_ms)?;
    words_in_place(&statement, knows.keys.is_some())?;
    let statement = opened(statement, frame.sealed.as_deref(), knows.keys)?;
    let statement_id = statement.id.clone();
    let naming = match knows.keys {
        Some(keys) => Naming::Keyed { owner, keys },
        None => Naming::Plain,
    };
    let answer = bind(statement, frame, knows.asked, naming)?;
    Ok(Admitted {
        answer,
        statement_id,
    })
}

/// Whether `statement`'s words come as this machine sent its questions':
/// a machine that `seals` them takes no answer whose words are in the
/// clear, or without their seal, whatever the server listed (a server that
/// listed a sealed question in the clear, with words of its own, gets the
/// reply to them, but nothing is done with it). By the Worker's own rule.
fn words_in_place(statement: &Statement, seals: bool) -> Result<(), Refusal> {
    let sealed = statement.sealed_hash.is_some();
    if seals && statement.answer.words_out_of_place(true, sealed) {
        return Err(Refusal::WordsInTheClear);
    }
    Ok(())
}

/// `statement`, checked ([`verify_as`]), with its answer's sealed words put
/// back: `sealed` (as they came beside it) must be the words it signed, by
/// their hash, sealed for its owner and question as an answer's
/// ([`field::ANSWER`]) under a version of `keys`, and open as an answer of
/// the form and decision it carries, within the limits the Worker checks
/// of an answer in the clear. A statement with no sealed words is as it
/// came.
fn opened(
    mut statement: Statement,
    sealed: Option<&str>,
    keys: Option<&ContentKeys>,
) -> Result<Statement, Refusal> {
    // Sealed words, and only they, come in a statement of their own
    // version, which a relay that cannot open them refuses.
    let Some(hash) = statement.sealed_hash.take() else {
        return match statement.v {
            VERSION => Ok(statement),
            _ => Err(Refusal::BadSignature),
        };
    };
    if statement.v != signed::SEALED_VERSION {
        return Err(Refusal::BadSignature);
    }
    let sealed = sealed
        .filter(|s| signed::sealed_hash(s) == hash)
        .ok_or(Refusal::Unopened)?;
    let keys = keys.ok_or(Refusal::Unopened)?;
    let plain = sealing::open(
        keys,
        &statement.owner,
        &statement.question_id,
        field::ANSWER,
        sealed,
    )
    .map_err(|_| Refusal::Unopened)?;
    let answer = words::restore_answer(&statement.answer, &plain).ok_or(Refusal::Unopened)?;
    let form = answer.form();
    if let Some(why) = needs_you_core::afar::check(&answer, form.kind(), Some(form), None) {
        return Err(Refusal::WrongAnswer(why));
    }
    statement.answer = answer;
    Ok(statement)
}

/// How this machine's reports name a request (its digest) and its lasting
/// choices (their ids) to the server, and so how a device's answer names
/// them: keyed under the content key on a machine that seals
/// (`sealed_report`), plain on one that does not.
#[derive(Clone, Copy)]
enum Naming<'a> {
    Plain,
    Keyed {
        owner: &'a str,
        keys: &'a ContentKeys,
    },
}

impl Naming<'_> {
    /// Whether `named`, as a statement says it, names `own`, as this
    /// machine recorded it.
    fn names(&self, own: &str, named: &str) -> bool {
        match self {
            Naming::Plain => own == named,
            Naming::Keyed { owner, keys } => keys.is_keyed(owner, own, named),
        }
    }
}

/// The answer to act on: the statement's, if it names `frame`'s question
/// and this machine's `open` question of the session (its own `seq`, its
/// request's digest, as `naming` says them), in a form that question takes;
/// a lasting choice read back to the id of one that open offers. The
/// server's copy of the answer is never used; only its id and `session_seq`
/// come from the frame, and the relay checks the signed `open_seq` as well
/// as that `session_seq` before every key, so the latter can only narrow
/// what is typed.
fn bind(
    statement: Statement,
    frame: &Answer,
    open: Option<&Asked>,
    naming: Naming,
) -> Result<Answer, Refusal> {
    let open = open.ok_or(Refusal::NotThisRequest)?;
    // A text answers a reply, a decision a permission, choices a dialog: the
    // card the device built for it was of that kind.
    let form = statement.answer.form();
    let form_fits = form.answers(open.kind) && statement.digest.is_none() == (form == Afar::Text);
    let digest_fits = match (&statement.digest, &open.digest) {
        (None, None) => true,
        (Some(named), Some(own)) => naming.names(own, named),
        _ => false,
    };
    if statement.question_id != frame.question_id
        || statement.session != frame.session
        || statement.session != open.session
        || statement.open_seq != open.seq
        || !digest_fits
        || !form_fits
    {
        return Err(Refusal::NotThisRequest);
    }
    // A lasting choice only as one this open offers, by the id recorded
    // with it: the one its waiter finds in its own dialog.
    let body = match statement.answer {
        AnswerBody::Decision {
            decision: Verdict::Lasting(named),
            message,
        } => {
            let own = open
                .lasting
                .iter()
                .find(|own| naming.names(own, &named))
                .ok_or(Refusal::NotThisRequest)?;
            AnswerBody::Decision {
                decision: Verdict::Lasting(own.clone()),
                message,
            }
        }
        body => body,
    };
    Ok(Answer {
        answer_id: frame.answer_id.clone(),
        question_id: statement.question_id,
        session: statement.session,
        open_seq: statement.open_seq,
        session_seq: frame.session_seq,
        body,
        // As recorded here: what the waiter of that request awaits.
        digest: open.digest.clone(),
        sealed: None,
        signed: None,
        devices: None,
    })
}

#[cfg(test)]
mod tests {
    use needs_you_core::afar::{AnswerBody, Verdict};
    use needs_you_core::Kind;

    use super::*;
    use crate::testing::*;

    #[test]
    fn a_machine_that_seals_takes_no_words_in_the_clear_nor_unsealed() {
        let reply = |text: &str| AnswerBody::Text { text: text.into() };
        let clear = statement("fp", reply("yes, go on"), None);
        assert_eq!(words_in_place(&clear, true), Err(Refusal::WordsInTheClear));
        assert_eq!(words_in_place(&clear, false), Ok(()), "a keyless machine's");
        // A reply's seal signed beside its empty form; a bare decision needs none.
        let mut sealed = statement("fp", reply(""), None);
        sealed.sealed_hash = Some("a".repeat(64));
        assert_eq!(words_in_place(&sealed, true), Ok(()));
        let unsealed = statement("fp", reply(""), None);
        assert_eq!(
            words_in_place(&unsealed, true),
            Err(Refusal::WordsInTheClear)
        );
        assert_eq!(
            words_in_place(&statement("fp", allow(), Some("d1")), true),
            Ok(())
        );
        let denied = AnswerBody::Decision {
            decision: Verdict::Deny,
            message: Some("not now".into()),
        };
        assert_eq!(
            words_in_place(&statement("fp", denied, Some("d1")), true),
            Err(Refusal::WordsInTheClear)
        );
    }

    #[test]
    fn sealed_words_are_taken_only_as_the_words_signed_for_that_answer() {
        let keys = ContentKeys::first().unwrap();
        let deny = AnswerBody::Decision {
            decision: Verdict::Deny,
            message: Some("not with AKIA-secret".into()),
        };
        let words = |body: &AnswerBody, question: &str| {
            let plain = serde_json::to_vec(body).unwrap();
            sealing::seal(
                keys.newest().unwrap(),
                "fp",
                question,
                field::ANSWER,
                &plain,
            )
            .unwrap()
        };
        let sealed = words(&deny, "q_1");
        let signed_for = |sealed: &str, answer: AnswerBody| {
            let mut s = statement("fp", answer, Some("d1"));
            s.v = signed::SEALED_VERSION;
            s.sealed_hash = Some(signed::sealed_hash(sealed));
            s
        };
        let s = signed_for(&sealed, deny.wordless());
        assert_eq!(
            opened(s.clone(), Some(&sealed), Some(&keys))
                .unwrap()
                .answer,
            deny
        );
        // Other words than those signed, none, or no key to open them.
        let other = words(&deny, "q_1");
        for (sealed, keys) in [
            (Some(other.as_str()), Some(&keys)),
            (None, Some(&keys)),
            (Some(sealed.as_str()), None),
        ] {
            assert_eq!(
                opened(s.clone(), sealed, keys).unwrap_err(),
                Refusal::Unopened
            );
        }
        // Sealed for another question, or for an allow under a signed deny.
        let moved = words(&deny, "q_2");
        let s = signed_for(&moved, deny.wordless());
        assert_eq!(
            opened(s, Some(&moved), Some(&keys)).unwrap_err(),
            Refusal::Unopened
        );
        let s = signed_for(&sealed, allow());
        assert_eq!(
            opened(s, Some(&sealed), Some(&keys)).unwrap_err(),
            Refusal::Unopened
        );
        // What the Worker would refuse in the clear is refused here.
        let long = AnswerBody::Decision {
            decision: Verdict::Deny,
            message: Some("x".repeat(needs_you_core::afar::MAX_TYPED_CHARS + 1)),
        };
        let sealed = words(&long, "q_1");
        let s = signed_for(&sealed, long.wordless());
        assert_eq!(code(opened(s, Some(&sealed), Some(&keys))), "wrong_answer");
        // A statement with no sealed words is as it came; sealed words come
        // in a version of their own, which a relay that cannot open them
        // refuses, and that version has them.
        let s = statement("fp", allow(), Some("d1"));
        assert_eq!(opened(s.clone(), None, None), Ok(s.clone()));
        let mut v2 = s;
        v2.v = signed::SEALED_VERSION;
        assert_eq!(opened(v2, None, None), Err(Refusal::BadSignature));
        let mut v1 = signed_for(&sealed, deny.wordless());
        v1.v = VERSION;
        assert_eq!(
            opened(v1, Some(&sealed), Some(&keys)),
            Err(Refusal::BadSignature)
        );
    }

    #[test]
    fn a_statement_binds_to_this_machines_own_open_of_that_request_and_its_answer_is_the_one_acted_on(
    ) {
        let s = statement("fp", allow(), Some("d1"));
        // The server's copy says deny; the signed allow is what goes on.
        let deny = AnswerBody::Decision {
            decision: Verdict::Deny,
            message: None,
        };
        let bound = bind(
            s.clone(),
            &frame(deny.clone()),
            Some(&open(Kind::Permission, 7, Some("d1"))),
            Naming::Plain,
        )
        .unwrap();
        assert_eq!((bound.body, bound.open_seq), (allow(), 7));

        let on = |open_q: Option<Asked>, s: Statement| {
            bind(s, &frame(deny.clone()), open_q.as_ref(), Naming::Plain)
        };
        assert_eq!(code(on(None, s.clone())), "not_this_request");
        // An identical request opened again: another seq.
        assert_eq!(
            code(on(Some(open(Kind::Permission, 8, Some("d1"))), s.clone())),
            "not_this_request"
        );
        assert_eq!(
            code(on(Some(open(Kind::Permission, 7, Some("d2"))), s.clone())),
            "not_this_request"
        );
        let mut other_question = s.clone();
        other_question.question_id = "q_2".into();
        assert_eq!(
            code(on(
                Some(open(Kind::Permission, 7, Some("d1"))),
                other_question
            )),
            "not_this_request"
        );
        // A text is for a reply only, a decision never for one.
        let text = statement("fp", AnswerBody::Text { text: "yes".into() }, None);
        assert_eq!(
            code(on(Some(open(Kind::Permission, 7, None)), text.clone())),
            "not_this_request"
        );
        assert!(on(Some(open(Kind::Reply, 7, None)), text).is_ok());
        // A decision is for a permission only: a device that was shown a
        // permission's request as a dialog's card signed for another card.
        assert_eq!(
            code(on(Some(open(Kind::Dialog, 7, Some("d1"))), s.clone())),
            "not_this_request"
        );
        let mut undigested = s.clone();
        undigested.digest = None;
        assert_eq!(
            code(on(Some(open(Kind::Reply, 7, None)), undigested)),
            "not_this_request"
        );
        // A lasting choice only as one the open offers, on a machine that
        // seals nothing too.
        let offered = format!("keep-{}", "e".repeat(64));
        let mut keeps = s;
        keeps.answer = AnswerBody::Decision {
            decision: Verdict::Lasting(offered.clone()),
            message: None,
        };
        let mut open_q = open(Kind::Permission, 7, Some("d1"));
        assert_eq!(
            code(on(Some(open_q.clone()), keeps.clone())),
            "not_this_request"
        );
        open_q.lasting = vec![offered];
        assert_eq!(on(Some(open_q), keeps.clone()).unwrap().body, keeps.answer);
    }

    #[test]
    fn on_a_machine_that_seals_a_statement_names_the_request_and_its_lasting_choice_keyed() {
        let keys = ContentKeys::first().unwrap();
        let naming = Naming::Keyed {
            owner: "fp",
            keys: &keys,
        };
        let key = keys.newest().unwrap();
        let (digest, own) = ("d".repeat(64), format!("keep-{}", "e".repeat(64)));
        let mut open_q = open(Kind::Permission, 7, Some(&digest));
        open_q.lasting = vec![format!("keep-{}", "f".repeat(64)), own.clone()];
        let lasting = |id: &str| AnswerBody::Decision {
            decision: Verdict::Lasting(id.into()),
            message: None,
        };
        let keyed = statement(
            "fp",
            lasting(&key.keyed("fp", &own)),
            Some(&key.keyed("fp", &digest)),
        );
        assert!(key.keyed("fp", &own).starts_with("keep-") && key.keyed("fp", &own) != own);
        let bound = bind(keyed.clone(), &frame(allow()), Some(&open_q), naming).unwrap();
        // Read back to this machine's own: what its waiter awaits and applies.
        assert_eq!(
            (bound.body, bound.digest),
            (lasting(&own), Some(digest.clone()))
        );

        let on = |s: Statement| code(bind(s, &frame(allow()), Some(&open_q), naming));
        // The plain digest, or one keyed for another owner or under a key
        // this machine does not hold, names nothing here.
        assert_eq!(
            on(statement("fp", allow(), Some(&digest))),
            "not_this_request"
        );
        let other = ContentKeys::first().unwrap();
        for d in [
            key.keyed("fp2", &digest),
            other.newest().unwrap().keyed("fp", &digest),
        ] {
            assert_eq!(on(statement("fp", allow(), Some(&d))), "not_this_request");
        }
        // A lasting choice its open does not offer, or named plain.
        let mut unoffered = keyed.clone();
        unoffered.answer = lasting(&key.keyed("fp", &format!("keep-{}", "0".repeat(64))));
        assert_eq!(on(unoffered), "not_this_request");
        let mut plain = keyed;
        plain.answer = lasting(&own);
        assert_eq!(on(plain), "not_this_request");
        // Allow and deny pass as they are.
        let allowed = statement("fp", allow(), Some(&key.keyed("fp", &digest)));
        assert_eq!(
            bind(allowed, &frame(allow()), Some(&open_q), naming)
                .unwrap()
                .body,
            allow()
        );
    }

    /// Every refusal [`admit`] gives, each from one change to an answer it
    /// takes (a phone's allow, certified and listed), on a machine that
    /// seals nothing and on one that does.
    #[test]
    fn admit_takes_the_owners_answer_and_refuses_each_change_with_its_code() {
        use crate::verify::{fingerprint, newest_list};
        use needs_you_core::signed::{Envelope, LIFETIME_MS};

        let (owner, phone) = (key(1), key(3));
        let fp = fingerprint(&public(&owner));
        let good = statement(&fp, allow(), Some("d1"));
        let cert = certificate(&owner, &phone, "answer", NOW + LIFETIME_MS);
        let by_phone = |s: &Statement, cert: &Envelope| Envelope {
            certificate: Some(Box::new(cert.clone())),
            ..signed_by(&phone, s)
        };
        let with = |signed: Option<Envelope>| Answer {
            signed: signed.map(Box::new),
            ..frame(allow())
        };
        let listed = newest_list(&fp, None, Some(&list(&owner, 1, &[&phone]))).unwrap();
        let asked = open(Kind::Permission, 7, Some("d1"));
        let knows = Knows {
            owner: Some(&fp),
            devices: Some(&listed),
            now_ms: NOW,
            keys: None,
            asked: Some(&asked),
        };
        let answer = with(Some(by_phone(&good, &cert)));
        let taken = admit(&answer, &knows).unwrap();
        assert_eq!(taken.statement_id, good.id, "the id the caller spends");
        assert_eq!(
            (taken.answer.body, taken.answer.digest),
            (allow(), Some("d1".into()))
        );

        let refused = |answer: &Answer, knows: &Knows| code(admit(answer, knows));
        assert_eq!(
            refused(
                &answer,
                &Knows {
                    owner: None,
                    ..knows
                }
            ),
            "not_pinned"
        );
        assert_eq!(admit(&with(None), &knows), Err(Refusal::Unsigned));
        assert_eq!(
            refused(&with(Some(signed_by(&key(4), &good))), &knows),
            "unknown_device"
        );
        let lapsed = certificate(&owner, &phone, "answer", NOW - 1);
        assert_eq!(
            refused(&with(Some(by_phone(&good, &lapsed))), &knows),
            "expired"
        );
        let stale = Knows {
            now_ms: NOW + LIFETIME_MS + 1,
            ..knows
        };
        assert_eq!(
            refused(&with(Some(signed_by(&owner, &good))), &stale),
            "expired"
        );
        let revoked = newest_list(&fp, None, Some(&list(&owner, 2, &[&key(6)]))).unwrap();
        assert_eq!(
            refused(
                &answer,
                &Knows {
                    devices: Some(&revoked),
                    ..knows
                }
            ),
            "revoked_device"
        );
        assert_eq!(
            refused(
                &answer,
                &Knows {
                    devices: None,
                    ..knows
                }
            ),
            "revoked_device"
        );
        let ended =
            newest_list(&fp, None, Some(&list_until(&owner, 3, &[&phone], NOW - 1))).unwrap();
        assert_eq!(
            refused(
                &answer,
                &Knows {
                    devices: Some(&ended),
                    ..knows
                }
            ),
            "stale_device_list"
        );
        let mut swapped = by_phone(&good, &cert);
        let deny = AnswerBody::Decision {
            decision: Verdict::Deny,
            message: None,
        };
        swapped.statement = signed_by(&phone, &statement(&fp, deny, Some("d1"))).statement;
        assert_eq!(refused(&with(Some(swapped)), &knows), "bad_signature");
        assert_eq!(
            refused(
                &answer,
                &Knows {
                    asked: None,
                    ..knows
                }
            ),
            "not_this_request"
        );
        // The session's open question is read by the frame's session: an
        // answer signed for one session, sent under another whose open has
        // the same seq and request, or bound to another's open.
        let elsewhere = Answer {
            session: "s2".into(),
            ..answer.clone()
        };
        assert_eq!(refused(&elsewhere, &knows), "not_this_request");
        let other_session = Asked {
            session: "s2".into(),
            ..asked.clone()
        };
        assert_eq!(
            refused(
                &answer,
                &Knows {
                    asked: Some(&other_session),
                    ..knows
                }
            ),
            "not_this_request"
        );
        let again = open(Kind::Permission, 8, Some("d1"));
        assert_eq!(
            refused(
                &answer,
                &Knows {
                    asked: Some(&again),
                    ..knows
                }
            ),
            "not_this_request"
        );

        // A machine that seals: the request named keyed, words only sealed.
        let keys = ContentKeys::first().unwrap();
        let content = keys.newest().unwrap();
        let sealing_machine = Knows {
            keys: Some(&keys),
            ..knows
        };
        let keyed = statement(&fp, allow(), Some(&content.keyed(&fp, "d1")));
        let answer = with(Some(by_phone(&keyed, &cert)));
        assert_eq!(
            admit(&answer, &sealing_machine).unwrap().answer.body,
            allow()
        );
        assert_eq!(
            refused(&answer, &knows),
            "not_this_request",
            "keyed, where nothing is"
        );
        let said = AnswerBody::Decision {
            decision: Verdict::Deny,
            message: Some("not with AKIA-secret".into()),
        };
        let in_clear = statement(&fp, said.clone(), Some(&content.keyed(&fp, "d1")));
        assert_eq!(
            refused(&with(Some(by_phone(&in_clear, &cert))), &sealing_machine),
            "words_in_the_clear"
        );
        let sealed_answer = |body: &AnswerBody| {
            let plain = serde_json::to_vec(body).unwrap();
            let words = sealing::seal(content, &fp, "q_1", field::ANSWER, &plain).unwrap();
            let mut s = statement(&fp, body.wordless(), Some(&content.keyed(&fp, "d1")));
            s.v = signed::SEALED_VERSION;
            s.sealed_hash = Some(signed::sealed_hash(&words));
            Answer {
                sealed: Some(words),
                ..with(Some(by_phone(&s, &cert)))
            }
        };
        let sealed = sealed_answer(&said);
        assert_eq!(admit(&sealed, &sealing_machine).unwrap().answer.body, said);
        assert_eq!(
            refused(
                &Answer {
                    sealed: None,
                    ..sealed.clone()
                },
                &sealing_machine
            ),
            "unopened"
        );
        assert_eq!(refused(&sealed, &knows), "unopened", "no key to open them");
        let long = AnswerBody::Decision {
            decision: Verdict::Deny,
            message: Some("x".repeat(needs_you_core::afar::MAX_TYPED_CHARS + 1)),
        };
        assert_eq!(
            refused(&sealed_answer(&long), &sealing_machine),
            "wrong_answer"
        );
    }
}
