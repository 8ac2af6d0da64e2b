//! What the relay's check of a signed answer costs (`trust::verify`, then
//! `trust::bind`), in microseconds: `bash bench/trust.sh`. Runs `ROUNDS`
//! rounds of `PER_ROUND` checks and prints each round's mean, then the
//! median and the spread of the rounds, as JSON on the last line.

use std::time::Instant;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use needs_you_core::afar::{AnswerBody, Verdict};
use needs_you_core::relay_messages::Answer;
use needs_you_core::signed::{Envelope, Statement, LIFETIME_MS, VERSION};
use needs_you_core::Kind;
use needs_you_reporter::state::OpenQuestion;
use needs_you_reporter::trust;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};

const ROUNDS: usize = 30;
const PER_ROUND: usize = 200;

fn main() {
    let key = SigningKey::from_slice(&[7u8; 32]).expect("a scalar");
    let public = key
        .verifying_key()
        .to_encoded_point(false)
        .as_bytes()
        .to_vec();
    let owner = trust::fingerprint(&public);
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
        expires_at: now + LIFETIME_MS,
    };
    let bytes = serde_json::to_vec(&statement).expect("json");
    let signature: Signature = key.sign(&bytes);
    let envelope = Envelope {
        statement: B64.encode(&bytes),
        signature: B64.encode(signature.to_bytes()),
        key: B64.encode(&public),
    };
    let frame = Answer {
        answer_id: "ans_bench".into(),
        question_id: "q_bench".into(),
        session: "session-bench".into(),
        open_seq: 42,
        session_seq: 42,
        body: statement.answer.clone(),
        digest: Some(digest.clone()),
        signed: Some(envelope.clone()),
    };
    let open = OpenQuestion {
        kind: Kind::Permission,
        seq: 42,
        transcript_at: None,
        agent: None,
        transcript: None,
        digest: Some(digest),
    };
    let mut means = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for _ in 0..PER_ROUND {
            let s = trust::verify(&owner, Some(&envelope), now).expect("verified");
            trust::bind(s, &frame, Some(&open)).expect("bound");
        }
        let us = start.elapsed().as_secs_f64() * 1e6 / PER_ROUND as f64;
        println!("round: {us:.1} us a check");
        means.push(us);
    }
    means.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{{\"median_us\": {:.1}, \"min_us\": {:.1}, \"max_us\": {:.1}, \"rounds\": {ROUNDS}, \"per_round\": {PER_ROUND}}}",
        means[ROUNDS / 2],
        means[0],
        means[ROUNDS - 1]
    );
}
