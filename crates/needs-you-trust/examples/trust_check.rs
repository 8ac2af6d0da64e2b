//! What the relay's check of a signed answer costs
//! (`needs_you_trust::admission::admit`), in microseconds: `bash
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
use needs_you_trust::admission::{admit, Asked, Knows};
use needs_you_trust::sealing::{self, ContentKeys};
use needs_you_trust::signing::SignKey;

const ROUNDS: usize = 30;
const PER_ROUND: usize = 200;

fn main() {
    let fixed = |seed: u8| SignKey::from_secret(&B64.encode([seed; 32])).expect("a scalar");
    let key = fixed(7);
    let owner = key.fingerprint();
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
    let envelope = key.sign_json(&statement);
    let phone = fixed(9);
    let certificate = Certificate {
        v: VERSION,
        owner: owner.clone(),
        device_id: "dev_phone".into(),
        key: B64.encode(phone.public()),
        seal_key: None,
        content_keys: Vec::new(),
        rights: Rights::from_list("answer"),
        expires_at: now + CERTIFICATE_LIFETIME_MS,
    };
    let by_phone = Envelope {
        certificate: Some(Box::new(key.sign_json(&certificate))),
        ..phone.sign_json(&statement)
    };
    let list = DeviceList {
        v: VERSION,
        owner: owner.clone(),
        version: 1,
        devices: vec![phone.fingerprint()],
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
    let asked = Asked {
        kind: Kind::Permission,
        seq: 42,
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
    let denied = key.sign_json(&denying);
    let sealed_frame = Answer {
        body: deny.wordless(),
        sealed: Some(sealed),
        ..frame.clone()
    };
    let mut owner_means = Vec::with_capacity(ROUNDS);
    let mut device_means = Vec::with_capacity(ROUNDS);
    let mut sealed_means = Vec::with_capacity(ROUNDS);
    // A machine that seals nothing takes the first two; one that seals,
    // which names its requests keyed, the third.
    let plain = Knows {
        owner: Some(&owner),
        devices: Some(&list),
        now_ms: now,
        keys: None,
        asked: Some(&asked),
    };
    let sealing_machine = Knows {
        keys: Some(&keys),
        ..plain
    };
    let time = |signed: &Envelope, frame: &Answer, knows: &Knows| {
        let frame = Answer {
            signed: Some(Box::new(signed.clone())),
            ..frame.clone()
        };
        let start = Instant::now();
        for _ in 0..PER_ROUND {
            admit(&frame, knows).expect("admitted");
        }
        start.elapsed().as_secs_f64() * 1e6 / PER_ROUND as f64
    };
    for _ in 0..ROUNDS {
        owner_means.push(time(&envelope, &frame, &plain));
        device_means.push(time(&by_phone, &frame, &plain));
        sealed_means.push(time(&denied, &sealed_frame, &sealing_machine));
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
