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
//! Nothing here does cryptography: the reporter checks, the command line
//! signs (`needs_you_reporter::trust`).

use serde::{Deserialize, Serialize};

use crate::afar::AnswerBody;

/// The statement's version: a machine refuses one it does not know.
pub const VERSION: u32 = 1;

/// How long a statement may be taken after it was signed: an answer is for
/// a dialog on screen now, and one held back longer is a replay to refuse.
pub const LIFETIME_MS: i64 = 10 * 60 * 1000;

/// How far ahead of the machine's clock a signer's may run: a statement that
/// claims to live longer than [`LIFETIME_MS`] from now, beyond this, is refused.
pub const CLOCK_SKEW_MS: i64 = 5 * 60 * 1000;

/// The longest envelope the Worker keeps and a machine reads.
pub const MAX_ENVELOPE_BYTES: usize = 8 * 1024;

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
    pub answer: AnswerBody,
    /// When it stops being taken (ms since the epoch).
    pub expires_at: i64,
}

/// A statement, its signature and the signer's public key, as they travel:
/// the server keeps and passes them on as they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    pub statement: String,
    pub signature: String,
    pub key: String,
}

impl Envelope {
    /// Whether it has the envelope's shape: three base64url texts within
    /// [`MAX_ENVELOPE_BYTES`]. What the Worker checks, since it can check
    /// nothing more.
    pub fn well_formed(&self) -> bool {
        let b64url = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        self.statement.len() + self.signature.len() + self.key.len() <= MAX_ENVELOPE_BYTES
            && b64url(&self.statement)
            && b64url(&self.signature)
            && b64url(&self.key)
    }
}

impl Statement {
    /// Whether it may still be taken at `now`: not past its expiry, and not
    /// claiming a life longer than a statement has.
    pub fn fresh(&self, now: i64) -> bool {
        now <= self.expires_at && self.expires_at <= now + LIFETIME_MS + CLOCK_SKEW_MS
    }
}

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
        };
        assert!(e("eyJ2IjoxfQ").well_formed());
        assert!(!e("eyJ2IjoxfQ==").well_formed());
        assert!(!e("").well_formed());
        assert!(!e(&"a".repeat(MAX_ENVELOPE_BYTES)).well_formed());
    }
}
