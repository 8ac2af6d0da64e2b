//! What the relay's check of a signed answer costs
//! (`needs_you_trust::admission::admit`), in microseconds: `bash
//! bench/trust.sh`. Three answers side by side, round after round: an allow
//! the owner's key signed, the same from a device whose certificate the
//! owner's key signed (two signatures to check, and the device list), and a
//! denial the owner's key signed whose message is sealed beside it (its
//! hash, then the words opened under the content key); and beside them the
//! passkey's check an allow from the page adds (`needs_you_trust::passkey`:
//! its client data read, one more P-256 signature). Runs `ROUNDS`
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
use needs_you_trust::passkey::{self, Assertion, Expected};
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
        session: "session-bench".into(),
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
    let mut passkey_means = Vec::with_capacity(ROUNDS);
    let statement_bytes = B64.decode(&envelope.statement).expect("base64url");
    let (assertion, passkey_key) = asserted(&statement_bytes);
    let expected = Expected {
        rp_id: "page.example",
        origin: "https://page.example",
        statement: &statement_bytes,
    };
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
        let start = Instant::now();
        for _ in 0..PER_ROUND {
            passkey::check(&assertion, &expected, &passkey_key).expect("taken");
        }
        passkey_means.push(start.elapsed().as_secs_f64() * 1e6 / PER_ROUND as f64);
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
        "{{\"owner_key\": {}, \"device_with_certificate\": {}, \"owner_key_sealed_words\": {}, \"passkey_assertion\": {}, \"rounds\": {ROUNDS}, \"per_round\": {PER_ROUND}}}",
        spread(owner_means),
        spread(device_means),
        spread(sealed_means),
        spread(passkey_means)
    );
}

/// A passkey's assertion of `statement` as a platform authenticator makes
/// one (UP and UV, counter 0, the signature in DER), and its public key.
fn asserted(statement: &[u8]) -> (Assertion, Vec<u8>) {
    use p256::ecdsa::signature::Signer as _;
    use p256::ecdsa::{Signature, SigningKey};
    use sha2::{Digest as _, Sha256};
    let key = SigningKey::from_slice(&[11; 32]).expect("a scalar");
    let client = format!(
        r#"{{"type":"webauthn.get","challenge":"{}","origin":"https://page.example","crossOrigin":false}}"#,
        B64.encode(passkey::challenge(statement))
    );
    let mut data = Sha256::digest(b"page.example").to_vec();
    data.extend_from_slice(&[0x05, 0, 0, 0, 0]);
    let mut signed = data.clone();
    signed.extend_from_slice(&Sha256::digest(client.as_bytes()));
    let signature: Signature = key.sign(&signed);
    let raw = signature.to_bytes();
    let int = |b: &[u8]| {
        let b = &b[b.iter().position(|&x| x != 0).unwrap_or(b.len() - 1)..];
        let pad = usize::from(b[0] & 0x80 != 0);
        let mut v = vec![0x02, (b.len() + pad) as u8];
        v.extend(std::iter::repeat_n(0, pad));
        v.extend_from_slice(b);
        v
    };
    let body = [int(&raw[..32]), int(&raw[32..])].concat();
    let der = [vec![0x30, body.len() as u8], body].concat();
    let public = key
        .verifying_key()
        .to_encoded_point(false)
        .as_bytes()
        .to_vec();
    let assertion = Assertion {
        authenticator_data: B64.encode(&data),
        client_data_json: B64.encode(&client),
        signature: B64.encode(der),
    };
    (assertion, public)
}
