//! Whether an answer from afar was made by the owner, for this machine's
//! own open question: the check of a signed answer
//! ([`needs_you_core::signed`]) against the owner key this machine was
//! logged in under. The relay makes it for every answer before anything
//! else (`relay::Relay::handle`), so that neither the server nor anything
//! that speaks on the relay's socket can have this machine type a word or
//! take a decision the owner did not sign.
//!
//! The machine knows its owner by the fingerprint of the owner's public key
//! (`NEEDS_YOU_OWNER`, which `needs-you run` sets from the login; `needs-you
//! login --owner` pinned it from the line `needs-you pair` printed, so the
//! server never chose it). What it checks, in order, each with its
//! [`Refusal`]: a statement came (`Unsigned`); its signer is the pinned key,
//! or a device whose certificate that key signed (`UnknownDevice`), still
//! in date (`Expired`), with the right to answer (`UnknownDevice`), and
//! named in the owner's newest device list this machine has seen
//! (`RevokedDevice`); the signature holds over the statement's bytes, which
//! read as a statement of this owner (`BadSignature`); it is fresh
//! (`Expired`); it names this machine's own open question of the session,
//! by `seq` and digest, in the answer's form (`NotThisRequest`); its id was
//! never taken before (`Spent`, kept by the caller). An answer whose words
//! are sealed ([`opened`]) has them beside the statement, the very ones it
//! signed by their hash, opening with the content key this machine holds as
//! the answer the statement says (`Unopened`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use needs_you_core::afar::{Afar, AnswerBody, Refusal, Verdict};
use needs_you_core::api::Right;
use needs_you_core::relay_messages::Answer;
use needs_you_core::sealed::field;
use needs_you_core::signed::{self, Certificate, DeviceList, Envelope, Signed, Statement, VERSION};
use needs_you_core::words;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use serde::de::DeserializeOwned;
use sha2::{Digest as _, Sha256};

use crate::sealing::{self, ContentKeys};
use crate::state::OpenQuestion;

/// The environment variable that names the owner key's fingerprint.
pub const OWNER_VAR: &str = "NEEDS_YOU_OWNER";

/// The fingerprint of a public key (SEC1 bytes): the SHA-256 of those
/// bytes, base64url. What a person pastes to pin the owner on a machine.
pub fn fingerprint(key_sec1: &[u8]) -> String {
    B64.encode(Sha256::digest(key_sec1))
}

/// The owner this machine takes answers from, if it was logged in under one.
pub fn pinned_owner() -> Option<String> {
    std::env::var(OWNER_VAR)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The bytes `envelope` signs, if its signature by its own key holds.
fn signed_bytes(envelope: &Envelope) -> Result<Vec<u8>, Refusal> {
    let key_bytes = B64
        .decode(&envelope.key)
        .map_err(|_| Refusal::BadSignature)?;
    let key = VerifyingKey::from_sec1_bytes(&key_bytes).map_err(|_| Refusal::BadSignature)?;
    let bytes = B64
        .decode(&envelope.statement)
        .map_err(|_| Refusal::BadSignature)?;
    let signature = B64
        .decode(&envelope.signature)
        .ok()
        .and_then(|s| Signature::from_slice(&s).ok())
        .ok_or(Refusal::BadSignature)?;
    key.verify(&bytes, &signature)
        .map_err(|_| Refusal::BadSignature)?;
    Ok(bytes)
}

/// What `envelope` says, if the `owner`'s own key signed it.
pub fn owner_signed<T: DeserializeOwned>(owner: &str, envelope: &Envelope) -> Result<T, Refusal> {
    let key = B64
        .decode(&envelope.key)
        .map_err(|_| Refusal::BadSignature)?;
    if fingerprint(&key) != owner {
        return Err(Refusal::UnknownDevice);
    }
    let bytes = signed_bytes(envelope)?;
    serde_json::from_slice(&bytes).map_err(|_| Refusal::BadSignature)
}

/// The newer of the device list this machine `kept` and the one the server
/// `offered`, if that one is the owner's own and newer: a list the owner's
/// key did not sign is ignored, as is an older one (a server may hold back
/// the newest, never undo it here).
pub fn newest_list(
    owner: &str,
    kept: Option<DeviceList>,
    offered: Option<&Envelope>,
) -> Option<DeviceList> {
    let offered = offered
        .and_then(|e| owner_signed::<DeviceList>(owner, e).ok())
        .filter(|l| l.v == VERSION && l.owner == owner);
    match (kept, offered) {
        (Some(k), Some(o)) if o.version > k.version => Some(o),
        (Some(k), _) => Some(k),
        (None, o) => o,
    }
}

/// Whether `envelope`'s signer may answer for `owner`: the owner's own key,
/// or a device whose certificate that key signed, in date at `now`, with
/// the right to answer, and named in the newest `devices` list.
fn may_answer(
    owner: &str,
    envelope: &Envelope,
    devices: Option<&DeviceList>,
    now: i64,
) -> Result<(), Refusal> {
    let key = B64
        .decode(&envelope.key)
        .map_err(|_| Refusal::BadSignature)?;
    if fingerprint(&key) == owner {
        return Ok(());
    }
    let certificate = envelope
        .certificate
        .as_deref()
        .ok_or(Refusal::UnknownDevice)?;
    let cert: Certificate = owner_signed(owner, certificate)?;
    if cert.v != VERSION || cert.owner != owner || cert.key != envelope.key {
        return Err(Refusal::UnknownDevice);
    }
    if now > cert.expires_at {
        return Err(Refusal::Expired);
    }
    if !cert.rights.has(Right::Answer) {
        return Err(Refusal::UnknownDevice);
    }
    // The list names keys, not the server's device ids: an id the server
    // hands a new device again never brings back a revoked key. A list past
    // its life may be one a server kept showing after a newer one left the
    // device out: it vouches for nobody.
    match devices {
        Some(list) if list.devices.contains(&fingerprint(&key)) => match now > list.expires_at {
            true => Err(Refusal::StaleDeviceList),
            false => Ok(()),
        },
        _ => Err(Refusal::RevokedDevice),
    }
}

/// An answer's [`Statement`], as [`verify_as`] checks it.
pub fn verify(
    owner: &str,
    envelope: Option<&Envelope>,
    devices: Option<&DeviceList>,
    now: i64,
) -> Result<Statement, Refusal> {
    verify_as(owner, envelope, devices, now)
}

/// The statement of `envelope` (an answer's [`Statement`], or a rule's
/// [`Revoking`](needs_you_core::signed::Revoking)), if its signer may
/// answer for the pinned `owner` (the owner's key, or a device of the
/// newest `devices` list), its signature holds, and it is fresh at `now`
/// (ms).
pub fn verify_as<T: Signed + DeserializeOwned>(
    owner: &str,
    envelope: Option<&Envelope>,
    devices: Option<&DeviceList>,
    now: i64,
) -> Result<T, Refusal> {
    let envelope = envelope.ok_or(Refusal::Unsigned)?;
    may_answer(owner, envelope, devices, now)?;
    let bytes = signed_bytes(envelope)?;
    let statement: T = serde_json::from_slice(&bytes).map_err(|_| Refusal::BadSignature)?;
    if !T::VERSIONS.contains(&statement.version()) || statement.owner() != owner {
        return Err(Refusal::BadSignature);
    }
    if !statement.fresh(now) {
        return Err(Refusal::Expired);
    }
    Ok(statement)
}

/// Whether `statement`'s words come as this machine sent its questions':
/// a machine that `seals` them takes no answer whose words are in the
/// clear, or without their seal, whatever the server listed (a server that
/// listed a sealed question in the clear, with words of its own, gets the
/// reply to them, but nothing is done with it). By the Worker's own rule.
pub fn words_in_place(statement: &Statement, seals: bool) -> Result<(), Refusal> {
    let sealed = statement.sealed_hash.is_some();
    if seals && statement.answer.words_out_of_place(true, sealed) {
        return Err(Refusal::WordsInTheClear);
    }
    Ok(())
}

/// `statement`, checked ([`verify`]), with its answer's sealed words put
/// back: `sealed` (as they came beside it) must be the words it signed, by
/// their hash, sealed for its owner and question as an answer's
/// ([`field::ANSWER`]) under a version of `keys`, and open as an answer of
/// the form and decision it carries, within the limits the Worker checks
/// of an answer in the clear. A statement with no sealed words is as it
/// came.
pub fn opened(
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
pub enum Naming<'a> {
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
pub fn bind(
    statement: Statement,
    frame: &Answer,
    open: Option<&OpenQuestion>,
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
    use needs_you_core::signed::LIFETIME_MS;
    use needs_you_core::Kind;
    use p256::ecdsa::signature::Signer as _;
    use p256::ecdsa::SigningKey;

    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    fn key(seed: u8) -> SigningKey {
        SigningKey::from_slice(&[seed; 32]).unwrap()
    }

    fn public(k: &SigningKey) -> Vec<u8> {
        k.verifying_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    }

    fn allow() -> AnswerBody {
        AnswerBody::Decision {
            decision: Verdict::Allow,
            message: None,
        }
    }

    fn statement(owner: &str, answer: AnswerBody, digest: Option<&str>) -> Statement {
        Statement {
            v: VERSION,
            owner: owner.into(),
            id: "aW-random-id".into(),
            question_id: "q_1".into(),
            session: "s1".into(),
            open_seq: 7,
            digest: digest.map(str::to_owned),
            answer,
            sealed_hash: None,
            expires_at: NOW + LIFETIME_MS,
        }
    }

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

    fn seal(k: &SigningKey, s: &Statement) -> Envelope {
        signed_by(k, s)
    }

    fn frame(body: AnswerBody) -> Answer {
        Answer {
            answer_id: "ans_1".into(),
            question_id: "q_1".into(),
            session: "s1".into(),
            open_seq: 7,
            session_seq: 7,
            body,
            digest: Some("d1".into()),
            sealed: None,
            signed: None,
            devices: None,
        }
    }

    fn open(kind: Kind, seq: u64, digest: Option<&str>) -> OpenQuestion {
        OpenQuestion {
            kind,
            seq,
            transcript_at: None,
            agent: None,
            transcript: None,
            digest: digest.map(str::to_owned),
            lasting: vec![],
        }
    }

    fn code<T: std::fmt::Debug>(r: Result<T, Refusal>) -> &'static str {
        r.expect_err("refused").code()
    }

    #[test]
    fn the_owners_signed_statement_is_taken_and_anything_else_is_refused_with_its_code() {
        let owner = key(1);
        let fp = fingerprint(&public(&owner));
        let good = statement(&fp, allow(), Some("d1"));
        assert_eq!(
            verify(&fp, Some(&seal(&owner, &good)), None, NOW),
            Ok(good.clone())
        );

        assert_eq!(code(verify(&fp, None, None, NOW)), "bad_signature");
        assert_eq!(verify(&fp, None, None, NOW), Err(Refusal::Unsigned));
        // Another key, even over the owner's fingerprint in the statement.
        let other = key(2);
        assert_eq!(
            code(verify(&fp, Some(&seal(&other, &good)), None, NOW)),
            "unknown_device"
        );
        // The owner's key, the signature of another statement.
        let mut swapped = seal(&owner, &good);
        let deny = statement(
            &fp,
            AnswerBody::Decision {
                decision: Verdict::Deny,
                message: None,
            },
            Some("d1"),
        );
        swapped.statement = seal(&owner, &deny).statement;
        assert_eq!(
            code(verify(&fp, Some(&swapped), None, NOW)),
            "bad_signature"
        );
        // A garbled signature, or none.
        let mut garbled = seal(&owner, &good);
        garbled.signature = B64.encode([7u8; 64]);
        assert_eq!(
            code(verify(&fp, Some(&garbled), None, NOW)),
            "bad_signature"
        );
        let mut none = seal(&owner, &good);
        none.signature = String::new();
        assert_eq!(code(verify(&fp, Some(&none), None, NOW)), "bad_signature");
        // Signed by the owner's key, under another owner's name.
        let elsewhere = statement("someone-else", allow(), Some("d1"));
        assert_eq!(
            code(verify(&fp, Some(&seal(&owner, &elsewhere)), None, NOW)),
            "bad_signature"
        );
        // Stale, or claiming too long a life.
        assert_eq!(
            code(verify(
                &fp,
                Some(&seal(&owner, &good)),
                None,
                NOW + LIFETIME_MS + 1
            )),
            "expired"
        );
        let mut eternal = good.clone();
        eternal.expires_at = NOW + 24 * 3600 * 1000;
        assert_eq!(
            code(verify(&fp, Some(&seal(&owner, &eternal)), None, NOW)),
            "expired"
        );
    }

    #[test]
    fn a_rule_is_taken_back_only_by_a_signed_revoking_and_no_answer_reads_as_one() {
        use needs_you_core::signed::Revoking;
        let owner = key(1);
        let fp = fingerprint(&public(&owner));
        let revoking = Revoking {
            v: VERSION,
            owner: fp.clone(),
            id: "rv-random-id".into(),
            rule_id: "rul_1".into(),
            answer_id: "ans_1".into(),
            expires_at: NOW + LIFETIME_MS,
        };
        let signed = signed_by(&owner, &revoking);
        assert_eq!(
            verify_as::<Revoking>(&fp, Some(&signed), None, NOW),
            Ok(revoking.clone())
        );
        assert_eq!(
            code(verify_as::<Revoking>(&fp, None, None, NOW)),
            "bad_signature"
        );
        assert_eq!(
            code(verify_as::<Revoking>(
                &fp,
                Some(&signed_by(&key(2), &revoking)),
                None,
                NOW
            )),
            "unknown_device"
        );
        assert_eq!(
            code(verify_as::<Revoking>(
                &fp,
                Some(&signed),
                None,
                NOW + 2 * LIFETIME_MS
            )),
            "expired"
        );
        // An allow the owner signed is no taking back, nor the reverse.
        let allowed = seal(&owner, &statement(&fp, allow(), Some("d1")));
        assert_eq!(
            code(verify_as::<Revoking>(&fp, Some(&allowed), None, NOW)),
            "bad_signature"
        );
        assert_eq!(code(verify(&fp, Some(&signed), None, NOW)), "bad_signature");
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

        let on = |open_q: Option<OpenQuestion>, s: Statement| {
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

    fn signed_by<T: serde::Serialize>(k: &SigningKey, what: &T) -> Envelope {
        let bytes = serde_json::to_vec(what).unwrap();
        let sig: Signature = k.sign(&bytes);
        Envelope {
            statement: B64.encode(&bytes),
            signature: B64.encode(sig.to_bytes()),
            key: B64.encode(public(k)),
            certificate: None,
        }
    }

    fn certificate(
        owner: &SigningKey,
        device: &SigningKey,
        rights: &str,
        expires_at: i64,
    ) -> Envelope {
        let cert = Certificate {
            v: VERSION,
            owner: fingerprint(&public(owner)),
            device_id: "dev_phone".into(),
            key: B64.encode(public(device)),
            seal_key: None,
            content_keys: Vec::new(),
            rights: needs_you_core::api::Rights::from_list(rights),
            expires_at,
        };
        signed_by(owner, &cert)
    }

    fn list(owner: &SigningKey, version: u64, devices: &[&SigningKey]) -> Envelope {
        list_until(
            owner,
            version,
            devices,
            NOW + signed::DEVICE_LIST_LIFETIME_MS,
        )
    }

    fn list_until(
        owner: &SigningKey,
        version: u64,
        devices: &[&SigningKey],
        expires_at: i64,
    ) -> Envelope {
        let l = DeviceList {
            v: VERSION,
            owner: fingerprint(&public(owner)),
            version,
            devices: devices.iter().map(|d| fingerprint(&public(d))).collect(),
            expires_at,
        };
        signed_by(owner, &l)
    }

    #[test]
    fn a_device_answers_with_the_owners_certificate_while_the_newest_list_names_it() {
        let owner = key(1);
        let phone = key(3);
        let fp = fingerprint(&public(&owner));
        let good = statement(&fp, allow(), Some("d1"));
        let by_phone = |cert: Envelope| Envelope {
            certificate: Some(Box::new(cert)),
            ..seal(&phone, &good)
        };
        let listed = newest_list(&fp, None, Some(&list(&owner, 1, &[&phone])));
        let later = NOW + LIFETIME_MS;
        let cert = certificate(&owner, &phone, "answer", later);
        assert_eq!(
            verify(&fp, Some(&by_phone(cert.clone())), listed.as_ref(), NOW),
            Ok(good.clone())
        );

        // No certificate, or one another key signed, or one for another key.
        assert_eq!(
            code(verify(
                &fp,
                Some(&seal(&phone, &good)),
                listed.as_ref(),
                NOW
            )),
            "unknown_device"
        );
        let self_made = certificate(&phone, &phone, "answer", later);
        assert_eq!(
            code(verify(
                &fp,
                Some(&by_phone(self_made)),
                listed.as_ref(),
                NOW
            )),
            "unknown_device"
        );
        let someone_elses = certificate(&owner, &key(4), "answer", later);
        assert_eq!(
            code(verify(
                &fp,
                Some(&by_phone(someone_elses)),
                listed.as_ref(),
                NOW
            )),
            "unknown_device"
        );
        // Without the right to answer, or out of date.
        let reader = certificate(&owner, &phone, "screen", later);
        assert_eq!(
            code(verify(&fp, Some(&by_phone(reader)), listed.as_ref(), NOW)),
            "unknown_device"
        );
        let old = certificate(&owner, &phone, "answer", NOW - 1);
        assert_eq!(
            code(verify(&fp, Some(&by_phone(old)), listed.as_ref(), NOW)),
            "expired"
        );
        // A certificate whose signature was changed.
        let mut forged = cert.clone();
        forged.signature = seal(&owner, &good).signature;
        assert_eq!(
            code(verify(&fp, Some(&by_phone(forged)), listed.as_ref(), NOW)),
            "bad_signature"
        );
        // No list seen, or the newest leaves it out: revoked.
        assert_eq!(
            code(verify(&fp, Some(&by_phone(cert.clone())), None, NOW)),
            "revoked_device"
        );
        let revoked = newest_list(&fp, listed.clone(), Some(&list(&owner, 2, &[&key(6)])));
        assert_eq!(
            code(verify(
                &fp,
                Some(&by_phone(cert.clone())),
                revoked.as_ref(),
                NOW
            )),
            "revoked_device"
        );
        // A server cannot undo the revocation with the older list, nor make one.
        let kept = newest_list(&fp, revoked.clone(), Some(&list(&owner, 1, &[&phone])));
        assert_eq!(kept, revoked);
        let made_up = newest_list(&fp, revoked.clone(), Some(&list(&key(5), 9, &[&phone])));
        assert_eq!(made_up, revoked);
    }

    /// A server that keeps the list that revoked the phone from a machine
    /// gets the phone's answers taken there only while the list it shows
    /// still counts: past its life it vouches for nobody, and the owner's
    /// own key still answers.
    #[test]
    fn a_withheld_revocation_holds_once_the_list_shown_ends() {
        let owner = key(1);
        let phone = key(3);
        let fp = fingerprint(&public(&owner));
        let good = statement(&fp, allow(), Some("d1"));
        let cert = certificate(
            &owner,
            &phone,
            "answer",
            NOW + 2 * signed::DEVICE_LIST_LIFETIME_MS,
        );
        let by_phone = Envelope {
            certificate: Some(Box::new(cert)),
            ..seal(&phone, &good)
        };
        let shown = newest_list(&fp, None, Some(&list_until(&owner, 1, &[&phone], NOW)));
        assert_eq!(
            verify(&fp, Some(&by_phone), shown.as_ref(), NOW),
            Ok(good.clone())
        );
        assert_eq!(
            code(verify(&fp, Some(&by_phone), shown.as_ref(), NOW + 1)),
            "stale_device_list"
        );
        let by_owner = seal(&owner, &good);
        assert_eq!(
            verify(&fp, Some(&by_owner), shown.as_ref(), NOW + 1),
            Ok(good)
        );
    }
}
