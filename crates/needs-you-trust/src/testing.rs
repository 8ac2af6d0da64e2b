//! What the unit tests of the checks share: keys from a seed, statements,
//! certificates and device lists signed by them, and the answer frame and
//! open question they are checked against.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use needs_you_core::afar::{AnswerBody, Refusal, Verdict};
use needs_you_core::relay_messages::Answer;
use needs_you_core::signed::{
    self, Certificate, DeviceList, Envelope, Statement, LIFETIME_MS, VERSION,
};
use needs_you_core::Kind;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};

use crate::admission::Asked;
use crate::verify::fingerprint;

pub const NOW: i64 = 1_800_000_000_000;
pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_slice(&[seed; 32]).unwrap()
}

pub fn public(k: &SigningKey) -> Vec<u8> {
    k.verifying_key()
        .to_encoded_point(false)
        .as_bytes()
        .to_vec()
}

pub fn allow() -> AnswerBody {
    AnswerBody::Decision {
        decision: Verdict::Allow,
        message: None,
    }
}

pub fn statement(owner: &str, answer: AnswerBody, digest: Option<&str>) -> Statement {
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

pub fn seal(k: &SigningKey, s: &Statement) -> Envelope {
    signed_by(k, s)
}

pub fn frame(body: AnswerBody) -> Answer {
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

pub fn open(kind: Kind, seq: u64, digest: Option<&str>) -> Asked {
    Asked {
        session: "s1".into(),
        kind,
        seq,
        digest: digest.map(str::to_owned),
        lasting: vec![],
    }
}

pub fn code<T: std::fmt::Debug>(r: Result<T, Refusal>) -> &'static str {
    r.expect_err("refused").code()
}

pub fn signed_by<T: serde::Serialize>(k: &SigningKey, what: &T) -> Envelope {
    let bytes = serde_json::to_vec(what).unwrap();
    let sig: Signature = k.sign(&bytes);
    Envelope {
        statement: B64.encode(&bytes),
        signature: B64.encode(sig.to_bytes()),
        key: B64.encode(public(k)),
        certificate: None,
    }
}

pub fn certificate(
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

pub fn list(owner: &SigningKey, version: u64, devices: &[&SigningKey]) -> Envelope {
    list_until(
        owner,
        version,
        devices,
        NOW + signed::DEVICE_LIST_LIFETIME_MS,
    )
}

pub fn list_until(
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
