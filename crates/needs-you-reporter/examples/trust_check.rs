//! What the relay's check of a signed answer costs (`trust::verify`,
//! `trust::opened`, then `trust::bind`), in microseconds: `bash
//! bench/trust.sh`. Three answers side by side, round after round: an allow
//! the owner's key signed, the same from a device whose certificate the
//! owner's key signed (two signatures to check, and the device list), and a
//! denial the owner's key signed whose message is sealed beside it (its
//! hash, then the words opened under the content key). Runs `ROUNDS`
//! rounds of `PER_ROUND` checks of each and prints the median and the
//! spread of the rounds' means, as JSON on the last line.

use std::time::Instant;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use needs_you_core::afar::{AnswerBody, Verdict};
use needs_you_core::api::Rights;
use needs_you_core::relay_messages::Answer;
use needs_you_core::sealed::field;
use needs_you_core::signed::sealed_hash;
use needs_you_core::signed::{
    Certificate, DeviceList, Envelope, Statement, CERTIFICATE_LIFETIME_MS, LIFETIME_MS, VERSION,
};
use needs_you_core::Kind;
use needs_you_reporter::sealing::{self, ContentKeys};
use needs_you_reporter::state::OpenQuestion;
use needs_you_reporter::trust;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};

const ROUNDS: usize = 30;
const PER_ROUND: usize = 200;

fn main() {
    let public = |k: &SigningKey| {
        k.verifying_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    };
    let seal = |k: &SigningKey, bytes: &[u8]| {
        let signature: Signature = k.sign(bytes);
        Envelope {
            statement: B64.encode(bytes),
            signature: B64.encode(signature.to_bytes()),
            key: B64.encode(public(k)),
            certificate: None,
        }
    };
    let key = SigningKey::from_slice(&[7u8; 32]).expect("a scalar");
    let owner = trust::fingerprint(&public(&key));
    let now = 1_800_000_000_000;
    let digest = "a".repeat(64);
    let statement = Statement {
        v: VERSION,
        owner: owner.clone(),
        id: "bench-statement-id-0001".into(),
        question_id: "q_bench".into(),
        session: "session-bench".into(),
        open_seq: 42,
        digest: Some(digest.clone()),
        answer: AnswerBody::Decision {
            decision: Verdict::Allow,
            message: None,
        },
        sealed_hash: None,
        expires_at: now + LIFETIME_MS,
    };
    let bytes = serde_json::to_vec(&statement).expect("json");
    let envelope = seal(&key, &bytes);
    let phone = SigningKey::from_slice(&[9u8; 32]).expect("a scalar");
    let certificate = Certificate {
        v: VERSION,
        owner: owner.clone(),
        device_id: "dev_phone".into(),
        key: B64.encode(public(&phone)),
        seal_key: None,
        content_keys: Vec::new(),
        rights: Rights::from_list("answer"),
        expires_at: now + CERTIFICATE_LIFETIME_MS,
    };
    let by_phone = Envelope {
        certificate: Some(Box::new(seal(
            &key,
            &serde_json::to_vec(&certificate).expect("json"),
        ))),
        ..seal(&phone, &bytes)
    };
    let list = DeviceList {
        v: VERSION,
        owner: owner.clone(),
        version: 1,
        devices: vec![trust::fingerprint(&public(&phone))],
        expires_at: now + needs_you_core::signed::DEVICE_LIST_LIFETIME_MS,
    };
    let frame = Answer {
        answer_id: "ans_bench".into(),
        question_id: "q_bench".into(),
        session: "session-bench".into(),
        open_seq: 42,
        session_seq: 42,
        body: statement.answer.clone(),
        digest: Some(digest.clone()),
        sealed: None,
        signed: Some(Box::new(envelope.clone())),
        devices: None,
    };
    let open = OpenQuestion {
        kind: Kind::Permission,
        seq: 42,
        transcript_at: None,
        agent: None,
        transcript: None,
        digest: Some(digest.clone()),
        lasting: vec![],
    };
    // A denial whose message is sealed, as the page and `needs-you answer`
    // seal one for a sealed question, which names its request keyed.
    let keys = ContentKeys::first().expect("a content key");
    let deny = AnswerBody::Decision {
        decision: Verdict::Deny,
        message: Some("not on main: open a branch and run the tests there first".into()),
    };
    let words = serde_json::to_vec(&deny).expect("json");
    let sealed = sealing::seal(
        keys.newest().expect("a version"),
        &owner,
        "q_bench",
        field::ANSWER,
        &words,
    )
    .expect("sealed");
    let denying = Statement {
        v: needs_you_core::signed::SEALED_VERSION,
        answer: deny.wordless(),
        sealed_hash: Some(sealed_hash(&sealed)),
        digest: Some(keys.newest().expect("a version").keyed(&owner, &digest)),
        ..statement.clone()
    };
    let denied = seal(&key, &serde_json::to_vec(&denying).expect("json"));
    let sealed_frame = Answer {
        body: deny.wordless(),
        sealed: Some(sealed),
        ..frame.clone()
    };
    let mut owner_means = Vec::with_capacity(ROUNDS);
    let mut device_means = Vec::with_capacity(ROUNDS);
    let mut sealed_means = Vec::with_capacity(ROUNDS);
    let time = |signed: &Envelope, frame: &Answer| {
        let start = Instant::now();
        for _ in 0..PER_ROUND {
            let s = trust::verify(&owner, Some(signed), Some(&list), now).expect("verified");
            let s = trust::opened(s, frame.sealed.as_deref(), Some(&keys)).expect("opened");
            let naming = match frame.sealed {
                Some(_) => trust::Naming::Keyed {
                    owner: &owner,
                    keys: &keys,
                },
                None => trust::Naming::Plain,
            };
            trust::bind(s, frame, Some(&open), naming).expect("bound");
        }
        start.elapsed().as_secs_f64() * 1e6 / PER_ROUND as f64
    };
    for _ in 0..ROUNDS {
        owner_means.push(time(&envelope, &frame));
        device_means.push(time(&by_phone, &frame));
        sealed_means.push(time(&denied, &sealed_frame));
    }
    let spread = |mut m: Vec<f64>| {
        m.sort_by(|a, b| a.total_cmp(b));
        format!(
            "{{\"median_us\": {:.1}, \"min_us\": {:.1}, \"max_us\": {:.1}}}",
            m[ROUNDS / 2],
            m[0],
            m[ROUNDS - 1]
        )
    };
    println!(
        "{{\"owner_key\": {}, \"device_with_certificate\": {}, \"owner_key_sealed_words\": {}, \"rounds\": {ROUNDS}, \"per_round\": {PER_ROUND}}}",
        spread(owner_means),
        spread(device_means),
        spread(sealed_means)
    );
}
