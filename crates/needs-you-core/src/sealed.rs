//! Sealed content: the owner's content key, how it reaches each device and
//! machine through a server that must not read it, and how a word is sealed
//! under it. Only the bytes and text forms live here, the one definition
//! every side builds on; the cryptography is the reporter's
//! (`needs_you_reporter::sealing`, RustCrypto) and the page's (WebCrypto).
//!
//! The content key is 32 random bytes with a version; `needs-you setup`
//! makes version 1, and a revoked device makes a new version for what comes
//! after. The pairer **wraps** every version it holds to a new device's
//! seal key (ECDH P-256, its own key beside the signing key, proved with
//! the pairing's secret):
//!
//! ```text
//! w1.<version>.<ephemeral public key, SEC1 uncompressed>.<nonce, 12 bytes>.<AES-256-GCM of the 32-byte key>
//! key of the AES-GCM: HKDF-SHA256(ikm = the ECDH shared secret's x, no salt,
//!                                 info = wrap_info(owner, device, version, ephemeral, recipient))
//! ```
//!
//! A device takes an unwrapped version only if the certificate the owner
//! key signed for it names that version's [`commitment`]: wrapping needs
//! nothing but the device's public seal key, so a server could wrap a key
//! of its own choosing; it cannot make the owner key vouch for it.
//!
//! A word is **sealed** with AES-256-GCM under the content key, its
//! associated data naming the owner, the thing it belongs to and its field,
//! so a blob moved to another question or field does not open:
//!
//! ```text
//! s1.<version>.<nonce, 12 bytes>.<ciphertext with its 16-byte tag>
//! ```
//!
//! Every part after the version is base64url without padding.

/// How many bytes a content key has: AES-256.
pub const KEY_BYTES: usize = 32;
/// How many bytes an AES-GCM nonce has.
pub const NONCE_BYTES: usize = 12;

/// What a sealed word's text begins with.
pub const SEALED_PREFIX: &str = "s1";
/// What a wrapped content key's text begins with.
pub const WRAPPED_PREFIX: &str = "w1";

/// What a sealed word's associated data begins with.
const SEALED_LABEL: &str = "needs-you sealed v1\n";
/// What a wrapping key's HKDF info begins with.
const WRAP_LABEL: &str = "needs-you content key v1\n";
/// What a content key's commitment hashes first.
const COMMITMENT_LABEL: &str = "needs-you content key commitment v1\n";

/// The fields a sealed word can belong to: each blob opens only as the one
/// it was sealed as.
pub mod field {
    /// A terminal's screen, as Show terminal shows it; sealed by the relay,
    /// its scope [`super::open_scope`].
    pub const SCREEN: &str = "screen";
    /// A question's words: sealed by the reporter's sender, its scope
    /// [`super::open_scope`].
    pub const QUESTION: &str = "question";
    /// A lasting choice's words (its label and rule): sealed with the
    /// question, its scope the choice's id, which hashes the suggestion it
    /// applies.
    pub const RULE: &str = "rule";
    /// What a notification shows of a question ([`super::MAX_SUMMARY_BYTES`]
    /// at most): sealed with its words, its scope [`super::open_scope`],
    /// and opened by the page's service worker.
    pub const SUMMARY: &str = "summary";
    /// An answer's words (a reply's text, a denial's message, a dialog's
    /// choices: the whole [`crate::afar::AnswerBody`]): sealed by the
    /// device that makes it, its scope the question's id, and bound to the
    /// statement the device signs by their hash
    /// ([`crate::signed::Statement::sealed_hash`]).
    pub const ANSWER: &str = "answer";
    /// A task's name: sealed by the command line that starts the task
    /// (`needs-you run`), its scope the task's id, once the server gave it.
    pub const TASK: &str = "task";
}

/// The most bytes of an answer's words before they are sealed: a reply's
/// line, a message, choices, as JSON.
pub const MAX_ANSWER_WORDS_BYTES: usize = 12 * 1024;

/// The longest sealed answer the Worker keeps.
pub const MAX_SEALED_ANSWER_CHARS: usize = max_sealed_chars(MAX_ANSWER_WORDS_BYTES);

/// The most bytes of a question's summary before it is sealed: a Web Push
/// carries it sealed beside its other fields, within its 4 KB.
pub const MAX_SUMMARY_BYTES: usize = 600;

/// What a question's sameness key hashes first.
pub const SAME_LABEL: &str = "needs-you same question v1\n";

/// What a keyed id hashes first: a request's digest, a lasting choice's id
/// and a screen's digest leave a machine that seals keyed under the content
/// key ([`keyed_message`]), so that a server cannot test a guess of a
/// command, a rule or a screen against them.
pub const KEYED_LABEL: &str = "needs-you keyed id v1\n";

/// What the content key's HMAC-SHA256 covers for the keyed form of `plain`
/// (a request's [`crate::afar::digest`], a lasting choice's
/// [`crate::afar::lasting_id`], or `screen ` and a screen's
/// [`crate::screen::Screen::digest`]), for `owner`. The keyed form is that HMAC in
/// hex, after the `keep-` of a lasting choice's id, so that it reads as the
/// plain one does ([`crate::afar::is_digest`], [`crate::afar::is_lasting_id`]).
pub fn keyed_message(owner: &str, plain: &str) -> Vec<u8> {
    format!("{KEYED_LABEL}{owner}\n{plain}").into_bytes()
}

/// The keyed form of `plain` given its HMAC in hex, `mac`: `keep-` kept in
/// front of a lasting choice's id.
pub fn keyed_form(plain: &str, mac: &str) -> String {
    if crate::afar::is_lasting_id(plain) {
        format!("keep-{mac}")
    } else {
        mac.to_owned()
    }
}

/// The scope a question's words and its screens are sealed in: the session
/// and the `seq` of its open, as the agent's machine recorded them. Not a
/// question id, which the server gives: what was sealed for one open
/// cannot be opened as another's, whatever the server says.
pub fn open_scope(session: &str, open_seq: u64) -> String {
    format!("{session}\n{open_seq}")
}

/// What the owner key vouches for, in a device's certificate, of version
/// `version` of `owner`'s content key `key`: the SHA-256, in hex, of a label,
/// the owner, the version and the key. It tells nothing of the key.
pub fn commitment(owner: &str, version: u32, key: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(format!("{COMMITMENT_LABEL}{owner}\n{version}\n").as_bytes());
    hash.update(key);
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The associated data of a word sealed for `owner` (the owner key's
/// fingerprint), belonging to `scope` (a question's id, a task's id…) as
/// its `field`.
pub fn associated_data(owner: &str, scope: &str, field: &str) -> Vec<u8> {
    format!("{SEALED_LABEL}{owner}\n{scope}\n{field}").into_bytes()
}

/// The HKDF info of the key that wraps content key `version` for device
/// `device_id` of `owner`, from the `ephemeral` public key to the device's
/// `recipient` seal key (both base64url, as they travel): a wrapped key
/// handed to another device, or passed off as another version, does not open.
pub fn wrap_info(
    owner: &str,
    device_id: &str,
    version: u32,
    ephemeral: &str,
    recipient: &str,
) -> Vec<u8> {
    format!("{WRAP_LABEL}{owner}\n{device_id}\n{version}\n{ephemeral}\n{recipient}").into_bytes()
}

/// A sealed word's parts, as text: `s1.<version>.<nonce>.<ciphertext>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SealedText<'a> {
    pub version: u32,
    pub nonce: &'a str,
    pub ciphertext: &'a str,
}

impl<'a> SealedText<'a> {
    /// The parts of `text`, or `None` when it is no sealed word.
    pub fn parse(text: &'a str) -> Option<SealedText<'a>> {
        let mut parts = text.split('.');
        let (Some(SEALED_PREFIX), Some(version), Some(nonce), Some(ciphertext), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        let version = version_of(version)?;
        (crate::text::is_b64url(nonce) && crate::text::is_b64url(ciphertext)).then_some(
            SealedText {
                version,
                nonce,
                ciphertext,
            },
        )
    }

    pub fn format(&self) -> String {
        format!(
            "{SEALED_PREFIX}.{}.{}.{}",
            self.version, self.nonce, self.ciphertext
        )
    }
}

/// A wrapped content key's parts, as text:
/// `w1.<version>.<ephemeral>.<nonce>.<ciphertext>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrappedText<'a> {
    pub version: u32,
    pub ephemeral: &'a str,
    pub nonce: &'a str,
    pub ciphertext: &'a str,
}

impl<'a> WrappedText<'a> {
    /// The parts of `text`, or `None` when it is no wrapped key.
    pub fn parse(text: &'a str) -> Option<WrappedText<'a>> {
        let mut parts = text.split('.');
        let (
            Some(WRAPPED_PREFIX),
            Some(version),
            Some(ephemeral),
            Some(nonce),
            Some(ciphertext),
            None,
        ) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        )
        else {
            return None;
        };
        let version = version_of(version)?;
        [ephemeral, nonce, ciphertext]
            .iter()
            .all(|p| crate::text::is_b64url(p))
            .then_some(WrappedText {
                version,
                ephemeral,
                nonce,
                ciphertext,
            })
    }

    pub fn format(&self) -> String {
        format!(
            "{WRAPPED_PREFIX}.{}.{}.{}.{}",
            self.version, self.ephemeral, self.nonce, self.ciphertext
        )
    }
}

/// The longest sealed text of at most `plain_bytes` bytes: its base64url,
/// the tag, the nonce and the prefix, with room.
pub const fn max_sealed_chars(plain_bytes: usize) -> usize {
    (plain_bytes + 16).div_ceil(3) * 4 + 64
}

/// The longest wrapped key: the five parts of one key's wrapping, with room.
pub const MAX_WRAPPED_CHARS: usize = 256;
/// The most content key versions a device is given: one turns at each
/// revocation of a device that held the key.
pub const MAX_VERSIONS: usize = 256;

/// A version as text: a number from 1, written without leading zeros, so
/// that one version has one spelling.
fn version_of(text: &str) -> Option<u32> {
    let v: u32 = text.parse().ok()?;
    (v >= 1 && v.to_string() == text).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_word_reads_back_as_written_and_nothing_else_reads_as_one() {
        let s = SealedText {
            version: 3,
            nonce: "bm9uY2U",
            ciphertext: "Y2lwaGVy",
        };
        assert_eq!(SealedText::parse(&s.format()), Some(s));
        for bad in [
            "",
            "plain words",
            "s1.3.bm9uY2U",
            "s1.0.bm9uY2U.Y2lwaGVy",
            "s1.03.bm9uY2U.Y2lwaGVy",
            "s1.3.bm9u+2U.Y2lwaGVy",
            "s1.3.bm9uY2U.Y2lwaGVy.more",
            "s2.3.bm9uY2U.Y2lwaGVy",
            "s1.3..Y2lwaGVy",
        ] {
            assert_eq!(SealedText::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_wrapped_key_reads_back_as_written() {
        let w = WrappedText {
            version: 1,
            ephemeral: "BAAA",
            nonce: "bm9uY2U",
            ciphertext: "Y2lwaGVy",
        };
        assert_eq!(WrappedText::parse(&w.format()), Some(w));
        assert_eq!(WrappedText::parse("s1.1.bm9uY2U.Y2lwaGVy"), None);
        assert_eq!(WrappedText::parse("w1.1.BAAA.bm9uY2U"), None);
    }

    #[test]
    fn a_commitment_names_one_owners_one_version_of_one_key() {
        let c = commitment("fp", 1, &[7u8; 32]);
        assert_eq!(c.len(), 64);
        assert_ne!(c, commitment("fp", 2, &[7u8; 32]));
        assert_ne!(c, commitment("fp2", 1, &[7u8; 32]));
        assert_ne!(c, commitment("fp", 1, &[8u8; 32]));
    }

    #[test]
    fn the_associated_data_names_owner_scope_and_field_apart() {
        // Neither a fingerprint nor a field holds a newline, so the scope
        // between them reads one way only.
        assert_eq!(
            associated_data("fp", "q_1", field::SCREEN),
            b"needs-you sealed v1\nfp\nq_1\nscreen".to_vec()
        );
        assert_ne!(
            associated_data("fp", "q_1", field::SCREEN),
            associated_data("fp", "q_2", field::SCREEN)
        );
    }
}
