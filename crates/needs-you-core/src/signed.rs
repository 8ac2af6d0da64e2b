//! Signed answers: the statement a device of the owner signs for each
//! answer it makes, and the envelope that carries it through the server to
//! the agent's machine, which checks it before it acts.
//!
//! The signature covers the statement's bytes as the device wrote them (its
//! UTF-8 JSON): the machine checks those bytes, then reads the statement
//! from them. No rule of canonical form is needed on either side, so a page
//! in JavaScript and a command line in Rust sign alike, and nothing the
//! server does to the rest of the answer changes what the machine acts on:
//! it acts on the statement's answer, never on the server's copy.
//!
//! ```text
//! "signed": {"statement": "<base64url of the statement's JSON>",
//!            "signature": "<base64url of ECDSA P-256 over SHA-256, r ‖ s, 64 bytes>",
//!            "key":       "<base64url of the signer's public key, SEC1 uncompressed>"}
//!
//! statement: {"v": 1, "owner": "<fingerprint>", "id": "<random, 16 bytes or more, base64url>",
//!             "question_id", "session", "open_seq", "digest": "<hex>" | null,
//!             "answer": {text | decision (+ message) | choices}, "expires_at": <ms>}
//! ```
//!
//! Taking back a lasting rule granted from afar is signed the same way, as
//! a [`Revoking`] that names the answer that granted it. Both say what
//! [`Signed`] reads first: version, owner and expiry.
//!
//! A device other than the owner's command line signs with a key of its own
//! and carries its certificate, which the owner's key signed when it paired
//! the device, in the envelope (`"certificate"`, an envelope of a
//! [`Certificate`]). The owner's newest [`DeviceList`], also signed by the
//! owner's key, names the devices whose certificates still count: a machine
//! keeps the newest it has seen, and a device missing from it is revoked.
//!
//! A device proves its keys to the one who pairs it with the pairing's
//! secret, which only the pairing link carries (in its fragment, never sent
//! to a server): the HMAC-SHA256, under that secret, of [`PROOF_LABEL`]
//! followed by its signing key and its seal key as base64url and the rights
//! it asked for ([`proof_message`]).
//!
//! Nothing here does cryptography: the reporter checks, the command line
//! signs (`needs_you_reporter::trust`).

use serde::{Deserialize, Serialize};

use crate::afar::AnswerBody;
use crate::api::Rights;

/// The statement's version: a machine refuses one it does not know.
pub const VERSION: u32 = 1;

/// The version of a [`Statement`] whose answer's words are sealed beside it
/// ([`Statement::sealed_hash`]): a relay that knows no sealed words refuses
/// it, rather than act on the answer's form alone (a denial without its
/// message).
pub const SEALED_VERSION: u32 = 2;

/// How long a statement may be taken after it was signed: an answer is for
/// a dialog on screen now, and one held back longer is a replay to refuse.
pub const LIFETIME_MS: i64 = 10 * 60 * 1000;

/// How far ahead of the machine's clock a signer's may run: a statement that
/// claims to live longer than [`LIFETIME_MS`] from now, beyond this, is refused.
pub const CLOCK_SKEW_MS: i64 = 5 * 60 * 1000;

/// The longest envelope the Worker keeps and a machine reads, its
/// certificate included.
pub const MAX_ENVELOPE_BYTES: usize = 8 * 1024;

/// How long a device's certificate counts: the owner's command line makes a
/// new one when it pairs the device again.
pub const CERTIFICATE_LIFETIME_MS: i64 = 30 * 24 * 3600 * 1000;

/// How long the owner's device list counts on an agent's machine: the
/// bound on how long a server that withholds a newer list can keep a
/// revoked device answering on a machine that never saw it. The owner's
/// command line signs the list anew once a day as it runs, and at every
/// pairing and revocation; a machine whose newest list is older than this
/// takes no device's answer (the owner key's own still count) until a newer
/// one reaches it.
pub const DEVICE_LIST_LIFETIME_MS: i64 = 7 * 24 * 3600 * 1000;

/// What a pairing's proof of a device's keys begins with.
pub const PROOF_LABEL: &str = "needs-you pairing v2\n";

/// The bytes whose HMAC under the pairing's secret proves a device's
/// signing `key`, its `seal_key` (both base64url), which the content key is
/// wrapped to ([`crate::sealed`]), and the rights it `asked` for, as their
/// list in the one order of [`Right::ALL`](crate::api::Right): a server that
/// swapped a key, or says the device asked for more, is caught.
pub fn proof_message(key: &str, seal_key: &str, asked: &Rights) -> Vec<u8> {
    let asked = Rights::from_bits(asked.bits()).to_list();
    [
        PROOF_LABEL.as_bytes(),
        key.as_bytes(),
        b"\n",
        seal_key.as_bytes(),
        b"\n",
        asked.as_bytes(),
    ]
    .concat()
}

pub use crate::text::is_b64url;

/// What the owner's key says of a device it paired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Certificate {
    pub v: u32,
    /// The owner's fingerprint.
    pub owner: String,
    pub device_id: String,
    /// The device's public key, SEC1 uncompressed, base64url.
    pub key: String,
    /// The device's seal key (ECDH P-256, SEC1 uncompressed, base64url),
    /// which the content key is wrapped to: named here so that the owner's
    /// command line wraps a new version to the key it vouched for, never to
    /// one the server gives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal_key: Option<String>,
    /// The versions of the owner's content key given to it, by their
    /// commitments: the device takes no other, whatever the server hands it
    /// wrapped to its seal key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content_keys: Vec<Committed>,
    /// What it may do; a machine takes answers only from one with `answer`.
    pub rights: Rights,
    pub expires_at: i64,
}

/// A version of the owner's content key, as a certificate vouches for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Committed {
    pub version: u32,
    /// `crate::sealed::commitment` of that version.
    pub commitment: String,
}

/// The devices whose certificates count, as the owner's key last said:
/// `version` grows with every list, and a machine keeps the newest it saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceList {
    pub v: u32,
    pub owner: String,
    pub version: u64,
    /// The fingerprints of the devices' keys, never the server's device
    /// ids, which it could hand a new device again.
    pub devices: Vec<String>,
    /// When it stops counting (ms): [`DEVICE_LIST_LIFETIME_MS`] after it
    /// was signed. A list signed before lists had a life reads as ended
    /// (0): it vouches for nobody, but the owner's next list builds on it.
    #[serde(default)]
    pub expires_at: i64,
}

/// What the answering device says, and signs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    pub v: u32,
    /// The fingerprint of the owner's key the answer is made under.
    pub owner: String,
    /// The statement's own id, random: spent once on the agent's machine,
    /// whatever answer id the server gives it.
    pub id: String,
    pub question_id: String,
    /// The CLI's session, and the `seq` of the report that opened the
    /// question on the agent's machine: binds the answer to that machine's
    /// own open, never to one the server says was made.
    pub session: String,
    pub open_seq: u64,
    /// The digest of the request answered (a decision or choices); none
    /// for a reply's text.
    pub digest: Option<String>,
    /// The answer; only its form ([`AnswerBody::wordless`]) when its words
    /// are sealed ([`Statement::sealed_hash`]).
    pub answer: AnswerBody,
    /// For a question whose words are sealed: the [`sealed_hash`] of the
    /// answer's words, sealed under the owner's content key
    /// ([`crate::sealed::field::ANSWER`], scope the question's id), which
    /// travel beside the statement. Signed with the rest, so that no one can
    /// put other words in their place; opened on the agent's machine alone
    /// ([`crate::words::restore_answer`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_hash: Option<String>,
    /// When it stops being taken (ms since the epoch).
    pub expires_at: i64,
}

/// What a [`Statement`] says of the sealed words beside it: their SHA-256,
/// in hex, as they travel (`s1.…`).
pub fn sealed_hash(sealed: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(sealed.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A statement, its signature and the signer's public key, as they travel:
/// the server keeps and passes them on as they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    pub statement: String,
    pub signature: String,
    pub key: String,
    /// The signer's [`Certificate`], signed by the owner's key; none when the
    /// owner's key signs itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate: Option<Box<Envelope>>,
}

impl Envelope {
    /// Whether it has the envelope's shape: three base64url texts within
    /// [`MAX_ENVELOPE_BYTES`]. What the Worker checks, since it can check
    /// nothing more.
    pub fn well_formed(&self) -> bool {
        let parts =
            |e: &Envelope| is_b64url(&e.statement) && is_b64url(&e.signature) && is_b64url(&e.key);
        let size = |e: &Envelope| e.statement.len() + e.signature.len() + e.key.len();
        match &self.certificate {
            None => parts(self) && size(self) <= MAX_ENVELOPE_BYTES,
            // A certificate is signed by the owner's key, and carries none.
            Some(c) => {
                c.certificate.is_none()
                    && parts(self)
                    && parts(c)
                    && size(self) + size(c) <= MAX_ENVELOPE_BYTES
            }
        }
    }
}

/// What a device of the owner signs to take back a lasting rule it granted
/// from afar: the answer that granted it, which the agent's machine recorded
/// when it wrote the rule. Checked like a [`Statement`]; each takes back at
/// most one rule, once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revoking {
    pub v: u32,
    pub owner: String,
    pub id: String,
    /// The server's id of the rule, which the machine reports back on.
    pub rule_id: String,
    /// The answer that granted it.
    pub answer_id: String,
    pub expires_at: i64,
}

/// What every signed statement says of itself, which the agent's machine
/// checks before it reads the rest: its version, its owner and when it
/// stops being taken. (Each also has an `id`, spent once where it is acted
/// on.)
pub trait Signed {
    /// The versions of it a machine takes.
    const VERSIONS: &'static [u32];

    fn version(&self) -> u32;
    fn owner(&self) -> &str;
    fn expires_at(&self) -> i64;

    /// Whether it may still be taken at `now`: not past its expiry, and not
    /// claiming a life longer than a statement has.
    fn fresh(&self, now: i64) -> bool {
        let at = self.expires_at();
        now <= at && at <= now + LIFETIME_MS + CLOCK_SKEW_MS
    }
}

/// [`Signed`] for statements whose own fields are `v`, `owner` and
/// `expires_at`, each with the versions of it a machine takes.
macro_rules! signed_by_its_fields {
    ($($t:ty => $versions:expr),*) => {$(
        impl Signed for $t {
            const VERSIONS: &'static [u32] = $versions;

            fn version(&self) -> u32 {
                self.v
            }
            fn owner(&self) -> &str {
                &self.owner
            }
            fn expires_at(&self) -> i64 {
                self.expires_at
            }
        }
    )*};
}

signed_by_its_fields!(Statement => &[VERSION, SEALED_VERSION], Revoking => &[VERSION]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::afar::Verdict;

    fn statement(expires_at: i64) -> Statement {
        Statement {
            v: VERSION,
            owner: "fp".into(),
            id: "id".into(),
            question_id: "q_1".into(),
            session: "s1".into(),
            open_seq: 3,
            digest: Some("d".into()),
            answer: AnswerBody::Decision {
                decision: Verdict::Allow,
                message: None,
            },
            sealed_hash: None,
            expires_at,
        }
    }

    #[test]
    fn a_statement_is_fresh_until_it_expires_and_never_longer_than_its_lifetime() {
        let now = 1_000_000_000;
        assert!(statement(now + LIFETIME_MS).fresh(now));
        assert!(statement(now).fresh(now));
        assert!(!statement(now - 1).fresh(now));
        assert!(statement(now + LIFETIME_MS + CLOCK_SKEW_MS).fresh(now));
        assert!(!statement(now + LIFETIME_MS + CLOCK_SKEW_MS + 1).fresh(now));
    }

    #[test]
    fn a_statement_reads_back_as_written() {
        let s = statement(5);
        let text = serde_json::to_string(&s).unwrap();
        assert!(text.contains(r#""decision":"allow""#), "{text}");
        assert_eq!(serde_json::from_str::<Statement>(&text).unwrap(), s);
    }

    #[test]
    fn only_base64url_texts_within_the_limit_make_an_envelope() {
        let e = |s: &str| Envelope {
            statement: s.into(),
            signature: "c2ln".into(),
            key: "a2V5".into(),
            certificate: None,
        };
        assert!(e("eyJ2IjoxfQ").well_formed());
        assert!(!e("eyJ2IjoxfQ==").well_formed());
        assert!(!e("").well_formed());
        assert!(!e(&"a".repeat(MAX_ENVELOPE_BYTES)).well_formed());
        let certified = |c: Envelope| Envelope {
            certificate: Some(Box::new(c)),
            ..e("eyJ2IjoxfQ")
        };
        assert!(certified(e("Y2VydA")).well_formed());
        assert!(!certified(e("Y2VydA==")).well_formed());
        assert!(!certified(certified(e("Y2VydA"))).well_formed());
        assert!(certified(e(&"a".repeat(MAX_ENVELOPE_BYTES - 40))).well_formed());
        assert!(!certified(e(&"a".repeat(MAX_ENVELOPE_BYTES - 10))).well_formed());
    }
}
