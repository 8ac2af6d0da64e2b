//! A passkey's assertion over a statement: the WebAuthn check that the
//! person, at the page on its pinned origin, unlocked one signature of that
//! statement with their fingerprint or PIN.
//!
//! The browser's authenticator signs `authenticatorData ‖
//! SHA-256(clientDataJSON)` with ES256 (P-256, the signature in ASN.1 DER).
//! What [`check`] asks of it, each with its [`PasskeyRefusal`]:
//!
//! * the client data says `webauthn.get`, was made on the pinned origin and
//!   not inside another site's frame, and its challenge is the statement's
//!   ([`challenge`]: the SHA-256 of the statement's bytes, so the passkey
//!   unlocks exactly the words the device key signed, once);
//! * the authenticator data is for the pinned RP id (its SHA-256 leads it),
//!   and its flags say the person was there (UP) and verified (UV): a page
//!   or a service worker cannot make one without them;
//! * the signature holds under the passkey's public key, as registered.
//!
//! The signature counter is not checked: synced passkeys report 0 on every
//! use, and a replay is refused elsewhere, since the challenge is a
//! statement whose id the machine spends once.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// What `navigator.credentials.get` gives back, each field base64url as the
/// page sends it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assertion {
    pub authenticator_data: String,
    pub client_data_json: String,
    pub signature: String,
}

/// What the assertion must be for: the relying party's id (the page's
/// host), its origin as pinned, and the statement it unlocks.
#[derive(Debug, Clone, Copy)]
pub struct Expected<'a> {
    pub rp_id: &'a str,
    pub origin: &'a str,
    pub statement: &'a [u8],
}

/// Why an assertion does not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PasskeyRefusal {
    /// A field is not base64url, the client data not JSON, the
    /// authenticator data too short, the signature not DER.
    Malformed,
    /// The client data is not of a `webauthn.get`.
    WrongType,
    /// The challenge is not this statement's.
    WrongChallenge,
    /// Made on another origin, or inside another site's frame.
    WrongOrigin,
    /// For another relying party.
    WrongRpId,
    /// The authenticator did not see the person (no UP flag).
    NotPresent,
    /// The authenticator did not verify the person (no UV flag).
    NotVerified,
    /// The signature does not hold under the registered key.
    BadSignature,
}

impl PasskeyRefusal {
    /// A stable code, for logs and tests.
    pub fn code(self) -> &'static str {
        match self {
            PasskeyRefusal::Malformed => "passkey_malformed",
            PasskeyRefusal::WrongType => "passkey_wrong_type",
            PasskeyRefusal::WrongChallenge => "passkey_wrong_challenge",
            PasskeyRefusal::WrongOrigin => "passkey_wrong_origin",
            PasskeyRefusal::WrongRpId => "passkey_wrong_rp_id",
            PasskeyRefusal::NotPresent => "passkey_not_present",
            PasskeyRefusal::NotVerified => "passkey_not_verified",
            PasskeyRefusal::BadSignature => "passkey_bad_signature",
        }
    }
}

/// The authenticator data's flags: the person was present, and verified.
const USER_PRESENT: u8 = 0x01;
const USER_VERIFIED: u8 = 0x04;
/// The RP id's hash, then the flags, then a 4-byte counter.
const AUTHENTICATOR_DATA_MIN: usize = 37;

/// The challenge an assertion over `statement` carries: the SHA-256 of the
/// statement's bytes, as they are signed.
pub fn challenge(statement: &[u8]) -> [u8; 32] {
    Sha256::digest(statement).into()
}

/// The client data's fields that are checked; the rest (`topOrigin` aside)
/// is the browser's.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClientData {
    #[serde(rename = "type")]
    kind: String,
    challenge: String,
    origin: String,
    #[serde(default)]
    cross_origin: bool,
    #[serde(default)]
    top_origin: Option<String>,
}

/// Whether `assertion` is the person's, verified, over `expected`'s
/// statement on its origin, under `public_key` (SEC1, as registered).
pub fn check(
    assertion: &Assertion,
    expected: &Expected,
    public_key: &[u8],
) -> Result<(), PasskeyRefusal> {
    let bytes = |field: &str| B64.decode(field).map_err(|_| PasskeyRefusal::Malformed);
    let authenticator_data = bytes(&assertion.authenticator_data)?;
    let client_data_json = bytes(&assertion.client_data_json)?;
    let signature = bytes(&assertion.signature)?;

    let client: ClientData =
        serde_json::from_slice(&client_data_json).map_err(|_| PasskeyRefusal::Malformed)?;
    if client.kind != "webauthn.get" {
        return Err(PasskeyRefusal::WrongType);
    }
    if client.challenge != B64.encode(challenge(expected.statement)) {
        return Err(PasskeyRefusal::WrongChallenge);
    }
    if client.origin != expected.origin || client.cross_origin || client.top_origin.is_some() {
        return Err(PasskeyRefusal::WrongOrigin);
    }

    if authenticator_data.len() < AUTHENTICATOR_DATA_MIN {
        return Err(PasskeyRefusal::Malformed);
    }
    if authenticator_data[..32] != *Sha256::digest(expected.rp_id.as_bytes()) {
        return Err(PasskeyRefusal::WrongRpId);
    }
    let flags = authenticator_data[32];
    if flags & USER_PRESENT == 0 {
        return Err(PasskeyRefusal::NotPresent);
    }
    if flags & USER_VERIFIED == 0 {
        return Err(PasskeyRefusal::NotVerified);
    }

    let key =
        VerifyingKey::from_sec1_bytes(public_key).map_err(|_| PasskeyRefusal::BadSignature)?;
    let signature = der_signature(&signature).ok_or(PasskeyRefusal::Malformed)?;
    let mut signed = authenticator_data;
    signed.extend_from_slice(&Sha256::digest(&client_data_json));
    key.verify(&signed, &signature)
        .map_err(|_| PasskeyRefusal::BadSignature)
}

/// An ECDSA signature in ASN.1 DER, `SEQUENCE { INTEGER r, INTEGER s }`, as
/// WebAuthn's ES256 gives it; strict DER: each integer in its one shortest
/// form, nothing after it. (Its `s` may be high or low, as authenticators
/// make it: the statement it unlocks is spent once, so a second form of the
/// same signature replays nothing.)
fn der_signature(der: &[u8]) -> Option<Signature> {
    let (body, rest) = der_item(der, 0x30)?;
    if !rest.is_empty() {
        return None;
    }
    let (r, body) = der_item(body, 0x02)?;
    let (s, body) = der_item(body, 0x02)?;
    if !body.is_empty() {
        return None;
    }
    let mut raw = [0u8; 64];
    raw[..32].copy_from_slice(&der_scalar(r)?);
    raw[32..].copy_from_slice(&der_scalar(s)?);
    Signature::from_slice(&raw).ok()
}

/// One DER item of `tag` with a short length (a P-256 signature's are all
/// under 128 bytes): its contents, and what follows.
fn der_item(der: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&t, der) = der.split_first()?;
    let (&len, der) = der.split_first()?;
    if t != tag || len >= 0x80 || der.len() < usize::from(len) {
        return None;
    }
    Some(der.split_at(usize::from(len)))
}

/// A positive DER integer of at most 32 bytes, as 32 big-endian bytes: one
/// leading zero only where the high bit needs it, none other.
fn der_scalar(int: &[u8]) -> Option<[u8; 32]> {
    let (&first, _) = int.split_first()?;
    if first & 0x80 != 0 {
        return None;
    }
    let digits = match int {
        [0, next, ..] if next & 0x80 == 0 => return None,
        [0, rest @ ..] => rest,
        all => all,
    };
    if digits.len() > 32 {
        return None;
    }
    let mut out = [0u8; 32];
    out[32 - digits.len()..].copy_from_slice(digits);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Signer as _;
    use p256::ecdsa::SigningKey;

    const ORIGIN: &str = "https://page.example";
    const RP_ID: &str = "page.example";
    const STATEMENT: &[u8] = br#"{"v":1,"id":"st_1"}"#;

    /// An assertion as an authenticator makes one, with `flags`, over
    /// `client`'s JSON.
    fn made(key: &SigningKey, rp_id: &str, flags: u8, client: &str) -> Assertion {
        let mut data = Sha256::digest(rp_id.as_bytes()).to_vec();
        data.push(flags);
        data.extend_from_slice(&[0, 0, 0, 0]);
        let mut signed = data.clone();
        signed.extend_from_slice(&Sha256::digest(client.as_bytes()));
        let signature: Signature = key.sign(&signed);
        Assertion {
            authenticator_data: B64.encode(&data),
            client_data_json: B64.encode(client),
            signature: B64.encode(der(&signature)),
        }
    }

    /// `signature` in DER, each integer in its shortest positive form.
    fn der(signature: &Signature) -> Vec<u8> {
        let bytes = signature.to_bytes();
        let int = |b: &[u8]| {
            let b = &b[b.iter().position(|&x| x != 0).unwrap_or(b.len() - 1)..];
            let pad = b[0] & 0x80 != 0;
            let mut v = vec![0x02, (b.len() + usize::from(pad)) as u8];
            if pad {
                v.push(0);
            }
            v.extend_from_slice(b);
            v
        };
        let body = [int(&bytes[..32]), int(&bytes[32..])].concat();
        [vec![0x30, body.len() as u8], body].concat()
    }

    fn client(kind: &str, statement: &[u8], origin: &str) -> String {
        let challenge = B64.encode(challenge(statement));
        format!(
            r#"{{"type":"{kind}","challenge":"{challenge}","origin":"{origin}","crossOrigin":false}}"#
        )
    }

    fn public(key: &SigningKey) -> Vec<u8> {
        key.verifying_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec()
    }

    #[test]
    fn each_change_to_an_assertion_it_takes_is_refused_with_its_code() {
        let key = SigningKey::from_slice(&[7; 32]).unwrap();
        let expected = Expected {
            rp_id: RP_ID,
            origin: ORIGIN,
            statement: STATEMENT,
        };
        let good = client("webauthn.get", STATEMENT, ORIGIN);
        let verified = USER_PRESENT | USER_VERIFIED;
        let ok = made(&key, RP_ID, verified, &good);
        assert_eq!(check(&ok, &expected, &public(&key)), Ok(()));

        let other_key = SigningKey::from_slice(&[8; 32]).unwrap();
        let framed = good.replace(r#""crossOrigin":false"#, r#""crossOrigin":true"#);
        let topped = good.replace('}', r#","topOrigin":"https://evil.example"}"#);
        let cases = [
            (
                made(
                    &key,
                    RP_ID,
                    verified,
                    &client("webauthn.create", STATEMENT, ORIGIN),
                ),
                PasskeyRefusal::WrongType,
            ),
            (
                made(
                    &key,
                    RP_ID,
                    verified,
                    &client("webauthn.get", b"another", ORIGIN),
                ),
                PasskeyRefusal::WrongChallenge,
            ),
            (
                made(
                    &key,
                    RP_ID,
                    verified,
                    &client("webauthn.get", STATEMENT, "https://worker.example"),
                ),
                PasskeyRefusal::WrongOrigin,
            ),
            (
                made(&key, RP_ID, verified, &framed),
                PasskeyRefusal::WrongOrigin,
            ),
            (
                made(&key, RP_ID, verified, &topped),
                PasskeyRefusal::WrongOrigin,
            ),
            (
                made(&key, "worker.example", verified, &good),
                PasskeyRefusal::WrongRpId,
            ),
            (
                made(&key, RP_ID, USER_VERIFIED, &good),
                PasskeyRefusal::NotPresent,
            ),
            (
                made(&key, RP_ID, USER_PRESENT, &good),
                PasskeyRefusal::NotVerified,
            ),
            (
                made(&other_key, RP_ID, verified, &good),
                PasskeyRefusal::BadSignature,
            ),
        ];
        for (assertion, refusal) in cases {
            assert_eq!(
                check(&assertion, &expected, &public(&key)),
                Err(refusal),
                "{}",
                refusal.code()
            );
        }
        // The signed bytes changed after signing: the flags, the client data.
        let mut flipped = B64.decode(&ok.authenticator_data).unwrap();
        flipped[33] = 1;
        let recounted = Assertion {
            authenticator_data: B64.encode(flipped),
            ..ok.clone()
        };
        assert_eq!(
            check(&recounted, &expected, &public(&key)),
            Err(PasskeyRefusal::BadSignature)
        );
        let short = Assertion {
            authenticator_data: B64.encode([0u8; 36]),
            ..ok.clone()
        };
        assert_eq!(
            check(&short, &expected, &public(&key)),
            Err(PasskeyRefusal::Malformed)
        );
    }

    #[test]
    fn a_signature_is_read_from_its_one_der_encoding_only() {
        let key = SigningKey::from_slice(&[7; 32]).unwrap();
        let signature: Signature = key.sign(b"x");
        let der = der(&signature);
        assert_eq!(der_signature(&der), Some(signature));
        let mut trailing = der.clone();
        trailing.push(0);
        assert_eq!(der_signature(&trailing), None);
        // An integer padded with a zero it does not need.
        let s = &signature.to_bytes()[32..];
        let int = |b: &[u8]| {
            let mut v = vec![0x02, b.len() as u8];
            v.extend_from_slice(b);
            v
        };
        let seq = |parts: Vec<u8>| {
            let mut v = vec![0x30, parts.len() as u8];
            v.extend(parts);
            v
        };
        let mut padded = vec![0, 0x01];
        padded.extend_from_slice(&[0x22; 31]);
        let odd = seq([int(&padded), int(s)].concat());
        assert_eq!(der_signature(&odd), None);
        // A negative integer.
        let negative = seq([int(&[0x80; 32]), int(s)].concat());
        assert_eq!(der_signature(&negative), None);
    }
}
