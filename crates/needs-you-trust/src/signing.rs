//! A key that signs: the owner's, which signs its answers, the certificates
//! of the devices it pairs and its device list, or a device's, which signs
//! that device's answers with its certificate beside. ECDSA P-256 over the
//! statement's JSON bytes, in the envelope [`verify`](crate::verify) checks.
//! Where the key is kept is the caller's: here it is only its secret, as
//! text.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use needs_you_core::signed::Envelope;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use serde::Serialize;

use crate::verify::fingerprint;

/// The system gave no random bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoRandom(pub String);

impl std::fmt::Display for NoRandom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "no random bytes: {}", self.0)
    }
}

impl std::error::Error for NoRandom {}

pub struct SignKey {
    key: SigningKey,
}

impl SignKey {
    /// A new key, from the system's random source.
    pub fn generate() -> Result<SignKey, NoRandom> {
        loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| NoRandom(e.to_string()))?;
            // A scalar of zero or past the curve's order is refused: draw again.
            if let Ok(key) = SigningKey::from_slice(&bytes) {
                return Ok(SignKey { key });
            }
        }
    }

    /// The key whose private scalar [`SignKey::secret`] gave; `None` for
    /// anything else.
    pub fn from_secret(secret: &str) -> Option<SignKey> {
        let bytes = B64.decode(secret).ok()?;
        SigningKey::from_slice(&bytes)
            .ok()
            .map(|key| SignKey { key })
    }

    /// The private scalar, 32 bytes, base64url: what its file keeps.
    pub fn secret(&self) -> String {
        B64.encode(self.key.to_bytes())
    }

    /// The public half, SEC1 uncompressed.
    pub fn public(&self) -> Vec<u8> {
        self.key
            .verifying_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    }

    /// What a machine pins: [`fingerprint`] of the public half.
    pub fn fingerprint(&self) -> String {
        fingerprint(&self.public())
    }

    /// `what`, as JSON, signed: an answer's statement, a device's
    /// certificate, the owner's device list.
    pub fn sign_json(&self, what: &impl Serialize) -> Envelope {
        let bytes = serde_json::to_vec(what).unwrap_or_default();
        let signature: Signature = self.key.sign(&bytes);
        Envelope {
            statement: B64.encode(&bytes),
            signature: B64.encode(signature.to_bytes()),
            key: B64.encode(self.public()),
            certificate: None,
        }
    }
}

/// 16 random bytes, base64url: a statement's id, a pairing link's secret.
pub fn random_id() -> Result<String, NoRandom> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| NoRandom(e.to_string()))?;
    Ok(B64.encode(bytes))
}

#[cfg(test)]
mod tests {
    use needs_you_core::afar::{AnswerBody, Verdict};
    use needs_you_core::signed::{Statement, VERSION};

    use super::*;
    use crate::verify::verify_as;

    #[test]
    fn what_the_key_signs_checks_under_its_fingerprint_and_its_secret_gives_it_back() {
        let key = SignKey::generate().unwrap();
        let fp = key.fingerprint();
        let statement = Statement {
            v: VERSION,
            owner: fp.clone(),
            id: random_id().unwrap(),
            question_id: "q_1".into(),
            session: "s".into(),
            open_seq: 1,
            digest: Some("d".into()),
            answer: AnswerBody::Decision {
                decision: Verdict::Allow,
                message: None,
            },
            sealed_hash: None,
            expires_at: 2_000,
        };
        let envelope = key.sign_json(&statement);
        assert!(envelope.well_formed());
        assert_eq!(
            verify_as::<Statement>(&fp, Some(&envelope), None, 1_000),
            Ok(statement)
        );
        let again = SignKey::from_secret(&key.secret()).unwrap();
        assert_eq!(again.fingerprint(), fp);
        assert_ne!(SignKey::generate().unwrap().fingerprint(), fp);
        assert!(SignKey::from_secret("not a key").is_none());
        assert!(
            SignKey::from_secret(&B64.encode([0u8; 32])).is_none(),
            "zero is no scalar"
        );
    }
}
