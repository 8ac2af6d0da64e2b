//! The owner's content key and what is done with it natively, with
//! RustCrypto, in the forms [`needs_you_core::sealed`] defines (the page
//! does the same with WebCrypto):
//!
//! * the owner's command line keeps every version of the content key
//!   ([`ContentKeys`]) and **wraps** each to a device it pairs ([`wrap`]),
//!   to the seal key that device proved with the pairing's secret;
//! * a device or machine keeps its own seal key ([`SealKey`], ECDH P-256)
//!   and **unwraps** what it was given ([`unwrap`]);
//! * whoever holds the content key **seals** a word ([`seal`]) and
//!   **opens** one ([`open`]), bound to its owner, scope and field.
//!
//! Nothing here reads or writes a file: the keys travel as the JSON their
//! files keep, and the callers keep them private.

use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, KeyInit, Nonce};
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use hkdf::Hkdf;
use needs_you_core::sealed::{
    associated_data, commitment, wrap_info, SealedText, WrappedText, KEY_BYTES, NONCE_BYTES,
};
use needs_you_core::signed::Committed;
use p256::elliptic_curve::sec1::ToEncodedPoint as _;
use p256::{PublicKey, SecretKey};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// Why a key could not be made, or a word not sealed or opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SealError {
    /// The system gave no random bytes.
    NoRandom,
    /// A key (ours or one given) is not a P-256 key or not 32 bytes.
    BadKey,
    /// Not in the sealed or wrapped form at all.
    NotSealed,
    /// Sealed under a version of the content key this side does not hold.
    UnknownVersion(u32),
    /// The form is right but it does not open: another key, another owner,
    /// scope or field, or changed on its way.
    DoesNotOpen,
    /// A wrapped key that opens, but that the owner key did not vouch for.
    NotVouched,
}

impl std::fmt::Display for SealError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SealError::NoRandom => write!(f, "the system gave no random bytes"),
            SealError::BadKey => write!(f, "the key is not a needs-you key"),
            SealError::NotSealed => write!(f, "it is not sealed"),
            SealError::UnknownVersion(v) => write!(
                f,
                "it is sealed under version {v} of the content key, which this device does not hold"
            ),
            SealError::DoesNotOpen => write!(
                f,
                "sealed for something else, or changed on its way"
            ),
            SealError::NotVouched => write!(
                f,
                "a content key your owner key did not vouch for: someone other than your owner key made it"
            ),
        }
    }
}

impl std::error::Error for SealError {}

fn random<const N: usize>() -> Result<[u8; N], SealError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|_| SealError::NoRandom)?;
    Ok(bytes)
}

/// One version of the owner's content key.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentKey {
    pub version: u32,
    /// The 32 bytes, base64url.
    key: String,
}

impl std::fmt::Debug for ContentKey {
    // Never the key itself, in a log or a failed test's output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ContentKey {{ version: {} }}", self.version)
    }
}

impl ContentKey {
    fn new(version: u32) -> Result<ContentKey, SealError> {
        Ok(ContentKey {
            version,
            key: B64.encode(random::<KEY_BYTES>()?),
        })
    }

    fn from_bytes(version: u32, bytes: &[u8]) -> Result<ContentKey, SealError> {
        (bytes.len() == KEY_BYTES)
            .then(|| ContentKey {
                version,
                key: B64.encode(bytes),
            })
            .ok_or(SealError::BadKey)
    }

    /// What the owner key vouches for of this version, for `owner`
    /// ([`needs_you_core::sealed::commitment`]).
    pub fn commitment(&self, owner: &str) -> Committed {
        let bytes = B64.decode(&self.key).unwrap_or_default();
        Committed {
            version: self.version,
            commitment: commitment(owner, self.version, &bytes),
        }
    }

    /// The keyed hash of `words` for `owner`, in hex: the same words give
    /// the same hash under this version, and nothing of them shows to
    /// whoever lacks it ([`needs_you_core::report::Sealed::same`]).
    pub fn same(&self, owner: &str, words: &[u8]) -> String {
        let label = format!("{}{owner}\n", needs_you_core::sealed::SAME_LABEL);
        self.mac_hex(&[label.as_bytes(), words])
    }

    /// The keyed form of `plain` (a request's digest, a lasting choice's id,
    /// a screen's digest) for `owner` ([`needs_you_core::sealed::keyed_message`]):
    /// what travels in its place from a machine that seals, and what a
    /// device signs of a sealed question.
    pub fn keyed(&self, owner: &str, plain: &str) -> String {
        let mac = self.mac_hex(&[&needs_you_core::sealed::keyed_message(owner, plain)]);
        needs_you_core::sealed::keyed_form(plain, &mac)
    }

    /// HMAC-SHA256 under this version of `parts`, one after another, in hex.
    fn mac_hex(&self, parts: &[&[u8]]) -> String {
        use hmac::Mac as _;
        let bytes = B64.decode(&self.key).unwrap_or_default();
        let mut mac =
            <hmac::Hmac<Sha256> as hmac::Mac>::new_from_slice(&bytes).expect("HMAC takes any key");
        for part in parts {
            mac.update(part);
        }
        let hash = mac.finalize().into_bytes();
        hash.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn cipher(&self) -> Result<Aes256Gcm, SealError> {
        let bytes = B64.decode(&self.key).map_err(|_| SealError::BadKey)?;
        Aes256Gcm::new_from_slice(&bytes).map_err(|_| SealError::BadKey)
    }
}

/// Every version of the content key a side holds, oldest first: the newest
/// seals, any opens what was sealed under it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ContentKeys {
    pub keys: Vec<ContentKey>,
}

impl ContentKeys {
    /// Version 1, new: what `needs-you setup` makes.
    pub fn first() -> Result<ContentKeys, SealError> {
        Ok(ContentKeys {
            keys: vec![ContentKey::new(1)?],
        })
    }

    /// The version that seals what comes now.
    pub fn newest(&self) -> Option<&ContentKey> {
        self.keys.iter().max_by_key(|k| k.version)
    }

    pub fn version(&self, version: u32) -> Option<&ContentKey> {
        self.keys.iter().find(|k| k.version == version)
    }

    /// Whether `keyed` is [`ContentKey::keyed`] of `plain` under any version
    /// held: a device keys under the version its question's words were
    /// sealed under, which this machine holds.
    pub fn is_keyed(&self, owner: &str, plain: &str, keyed: &str) -> bool {
        self.keys.iter().any(|k| k.keyed(owner, plain) == keyed)
    }

    /// A new version, above every one held, for what comes after a device
    /// was revoked: its number.
    pub fn rotate(&mut self) -> Result<u32, SealError> {
        let version = self.newest().map_or(1, |k| k.version + 1);
        self.keys.push(ContentKey::new(version)?);
        Ok(version)
    }

    /// Every version, for device `device_id` of `owner` holding seal key
    /// `recipient`: the commitments its certificate vouches for, and the
    /// versions wrapped to it, in one order. What `pair` and a rotation
    /// hand a device.
    pub fn for_device(
        &self,
        owner: &str,
        device_id: &str,
        recipient: &str,
    ) -> Result<(Vec<Committed>, Vec<String>), SealError> {
        let wrapped = self
            .keys
            .iter()
            .map(|k| wrap(k, owner, device_id, recipient))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((
            self.keys.iter().map(|k| k.commitment(owner)).collect(),
            wrapped,
        ))
    }

    /// Takes `key` unless a version of its number is held already (a
    /// version, once held, is never replaced by what a server hands back).
    pub fn add(&mut self, key: ContentKey) {
        if self.version(key.version).is_none() {
            self.keys.push(key);
            self.keys.sort_by_key(|k| k.version);
        }
    }
}

/// A device's or machine's seal key: ECDH P-256, made where it lives; its
/// public half is proved at pairing and the content key wrapped to it.
pub struct SealKey {
    secret: SecretKey,
}

/// A seal key as its file keeps it.
#[derive(Serialize, Deserialize)]
pub struct StoredSealKey {
    /// The private scalar, 32 bytes, base64url.
    pub secret: String,
}

impl SealKey {
    pub fn generate() -> Result<SealKey, SealError> {
        loop {
            // A scalar of zero or past the curve's order is refused: draw again.
            if let Ok(secret) = SecretKey::from_slice(&random::<32>()?) {
                return Ok(SealKey { secret });
            }
        }
    }

    /// Its public half, SEC1 uncompressed, base64url: what it proves at pairing.
    pub fn public(&self) -> String {
        B64.encode(self.secret.public_key().to_encoded_point(false).as_bytes())
    }

    pub fn stored(&self) -> StoredSealKey {
        StoredSealKey {
            secret: B64.encode(self.secret.to_bytes()),
        }
    }

    pub fn from_stored(stored: &StoredSealKey) -> Result<SealKey, SealError> {
        let bytes = B64.decode(&stored.secret).map_err(|_| SealError::BadKey)?;
        let secret = SecretKey::from_slice(&bytes).map_err(|_| SealError::BadKey)?;
        Ok(SealKey { secret })
    }
}

/// The AES-256-GCM that wraps a content key from `ours` to `theirs`.
fn wrapping_cipher(
    ours: &SecretKey,
    theirs: &PublicKey,
    info: &[u8],
) -> Result<Aes256Gcm, SealError> {
    let shared = p256::ecdh::diffie_hellman(ours.to_nonzero_scalar(), theirs.as_affine());
    let mut key = [0u8; KEY_BYTES];
    Hkdf::<Sha256>::new(None, shared.raw_secret_bytes())
        .expand(info, &mut key)
        .map_err(|_| SealError::BadKey)?;
    Aes256Gcm::new_from_slice(&key).map_err(|_| SealError::BadKey)
}

fn public_key(b64: &str) -> Result<PublicKey, SealError> {
    let bytes = B64.decode(b64).map_err(|_| SealError::BadKey)?;
    PublicKey::from_sec1_bytes(&bytes).map_err(|_| SealError::BadKey)
}

/// `key` wrapped for device `device_id` of `owner`, to its seal key
/// `recipient` (base64url): a `w1.…` text only that seal key opens, and
/// only as that device's, that owner's, that version.
pub fn wrap(
    key: &ContentKey,
    owner: &str,
    device_id: &str,
    recipient: &str,
) -> Result<String, SealError> {
    let theirs = public_key(recipient)?;
    let ephemeral = SealKey::generate()?;
    let ephemeral_public = ephemeral.public();
    let info = wrap_info(owner, device_id, key.version, &ephemeral_public, recipient);
    let cipher = wrapping_cipher(&ephemeral.secret, &theirs, &info)?;
    let nonce = random::<NONCE_BYTES>()?;
    let bytes = B64.decode(&key.key).map_err(|_| SealError::BadKey)?;
    let ciphertext = cipher
        .encrypt(Nonce::from_slice(&nonce), bytes.as_slice())
        .map_err(|_| SealError::BadKey)?;
    Ok(WrappedText {
        version: key.version,
        ephemeral: &ephemeral_public,
        nonce: &B64.encode(nonce),
        ciphertext: &B64.encode(ciphertext),
    }
    .format())
}

/// The content key in `wrapped`, given to device `device_id` of `owner`
/// holding `seal`, if the owner key vouched for it: `vouched` are the
/// commitments of the device's certificate, which the caller checked. A
/// key that opens but is not among them was wrapped by someone else (any
/// holder of the seal key's public half can wrap one): refused.
pub fn unwrap(
    seal: &SealKey,
    owner: &str,
    device_id: &str,
    wrapped: &str,
    vouched: &[Committed],
) -> Result<ContentKey, SealError> {
    let w = WrappedText::parse(wrapped).ok_or(SealError::NotSealed)?;
    let info = wrap_info(owner, device_id, w.version, w.ephemeral, &seal.public());
    let cipher = wrapping_cipher(&seal.secret, &public_key(w.ephemeral)?, &info)?;
    let nonce = nonce_of(w.nonce)?;
    let ciphertext = B64.decode(w.ciphertext).map_err(|_| SealError::NotSealed)?;
    let bytes = cipher
        .decrypt(Nonce::from_slice(&nonce), ciphertext.as_slice())
        .map_err(|_| SealError::DoesNotOpen)?;
    let key = ContentKey::from_bytes(w.version, &bytes)?;
    if !vouched.contains(&key.commitment(owner)) {
        return Err(SealError::NotVouched);
    }
    Ok(key)
}

fn nonce_of(b64: &str) -> Result<Vec<u8>, SealError> {
    B64.decode(b64)
        .ok()
        .filter(|n| n.len() == NONCE_BYTES)
        .ok_or(SealError::NotSealed)
}

/// `plain` sealed under `key` for `owner`, as `scope`'s `field`: a `s1.…` text.
pub fn seal(
    key: &ContentKey,
    owner: &str,
    scope: &str,
    field: &str,
    plain: &[u8],
) -> Result<String, SealError> {
    let nonce = random::<NONCE_BYTES>()?;
    let aad = associated_data(owner, scope, field);
    let ciphertext = key
        .cipher()?
        .encrypt(
            Nonce::from_slice(&nonce),
            Payload {
                msg: plain,
                aad: &aad,
            },
        )
        .map_err(|_| SealError::BadKey)?;
    Ok(SealedText {
        version: key.version,
        nonce: &B64.encode(nonce),
        ciphertext: &B64.encode(ciphertext),
    }
    .format())
}

/// What `sealed` holds, if it was sealed for `owner` as `scope`'s `field`
/// under a version of `keys`.
pub fn open(
    keys: &ContentKeys,
    owner: &str,
    scope: &str,
    field: &str,
    sealed: &str,
) -> Result<Vec<u8>, SealError> {
    let s = SealedText::parse(sealed).ok_or(SealError::NotSealed)?;
    let key = keys
        .version(s.version)
        .ok_or(SealError::UnknownVersion(s.version))?;
    let nonce = nonce_of(s.nonce)?;
    let ciphertext = B64.decode(s.ciphertext).map_err(|_| SealError::NotSealed)?;
    let aad = associated_data(owner, scope, field);
    key.cipher()?
        .decrypt(
            Nonce::from_slice(&nonce),
            Payload {
                msg: &ciphertext,
                aad: &aad,
            },
        )
        .map_err(|_| SealError::DoesNotOpen)
}

#[cfg(test)]
mod tests {
    use needs_you_core::sealed::field::SCREEN;

    use super::*;

    #[test]
    fn a_key_wrapped_to_a_device_opens_there_only_as_that_devices_of_that_owner() {
        let keys = ContentKeys::first().unwrap();
        let key = keys.newest().unwrap();
        let phone = SealKey::generate().unwrap();
        let wrapped = wrap(key, "fp", "d_phone", &phone.public()).unwrap();
        assert!(!wrapped.contains(&key.key), "the key never in the clear");
        let vouched = [key.commitment("fp")];
        let unwrap = |seal: &SealKey, owner: &str, device: &str, text: &str| {
            unwrap(seal, owner, device, text, &vouched)
        };
        assert_eq!(unwrap(&phone, "fp", "d_phone", &wrapped).as_ref(), Ok(key));

        let other = SealKey::generate().unwrap();
        assert_eq!(
            unwrap(&other, "fp", "d_phone", &wrapped),
            Err(SealError::DoesNotOpen),
            "another device's seal key"
        );
        assert_eq!(
            unwrap(&phone, "fp", "d_other", &wrapped),
            Err(SealError::DoesNotOpen),
            "handed to another device id"
        );
        assert_eq!(
            unwrap(&phone, "fp2", "d_phone", &wrapped),
            Err(SealError::DoesNotOpen)
        );
        let as_version_2 = wrapped.replacen("w1.1.", "w1.2.", 1);
        assert_eq!(
            unwrap(&phone, "fp", "d_phone", &as_version_2),
            Err(SealError::DoesNotOpen),
            "passed off as another version"
        );
        assert_eq!(
            unwrap(&phone, "fp", "d_phone", "w1.1.x"),
            Err(SealError::NotSealed)
        );

        // A server holds the seal key's public half, and can wrap a key of
        // its own to it: it opens, and is refused, since the owner key
        // vouched only for the owner's.
        let planted = ContentKeys::first().unwrap();
        let by_server = wrap(planted.newest().unwrap(), "fp", "d_phone", &phone.public()).unwrap();
        assert_eq!(
            unwrap(&phone, "fp", "d_phone", &by_server),
            Err(SealError::NotVouched)
        );
    }

    #[test]
    fn a_sealed_word_opens_only_as_its_owners_scopes_field_under_its_version() {
        let mut keys = ContentKeys::first().unwrap();
        let secret = b"AKIA-planted-secret";
        let sealed = seal(keys.newest().unwrap(), "fp", "q_1", SCREEN, secret).unwrap();
        assert!(!sealed.contains("AKIA"));
        assert_eq!(
            open(&keys, "fp", "q_1", SCREEN, &sealed),
            Ok(secret.to_vec())
        );
        assert_eq!(
            open(&keys, "fp", "q_2", SCREEN, &sealed),
            Err(SealError::DoesNotOpen),
            "moved to another question"
        );
        assert_eq!(
            open(&keys, "fp", "q_1", "text", &sealed),
            Err(SealError::DoesNotOpen),
            "moved to another field"
        );
        assert_eq!(
            open(&keys, "fp", "q_1", SCREEN, "plain words"),
            Err(SealError::NotSealed)
        );
        // The ciphertext's first character: every bit of it is the
        // ciphertext's (a last character may carry padding bits that a strict
        // decoder refuses, which would test the wrong refusal).
        let mut changed = sealed.clone().into_bytes();
        let first = sealed.rfind('.').unwrap() + 1;
        changed[first] = if changed[first] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            open(
                &keys,
                "fp",
                "q_1",
                SCREEN,
                &String::from_utf8(changed).unwrap()
            ),
            Err(SealError::DoesNotOpen)
        );

        // A second version seals what comes after; the first still opens
        // what it sealed, and a side without the second cannot open it.
        let before = keys.clone();
        keys.add(ContentKey::new(2).unwrap());
        let later = seal(keys.newest().unwrap(), "fp", "q_3", SCREEN, b"later").unwrap();
        assert!(later.starts_with("s1.2."));
        assert_eq!(
            open(&keys, "fp", "q_1", SCREEN, &sealed),
            Ok(secret.to_vec())
        );
        assert_eq!(
            open(&before, "fp", "q_3", SCREEN, &later),
            Err(SealError::UnknownVersion(2))
        );
    }

    #[test]
    fn a_rotation_makes_a_new_version_above_the_others_and_keeps_them() {
        let mut keys = ContentKeys::first().unwrap();
        let first = keys.newest().unwrap().clone();
        assert_eq!(keys.rotate(), Ok(2));
        assert_eq!(keys.newest().unwrap().version, 2);
        assert_ne!(keys.newest().unwrap().key, first.key);
        assert_eq!(keys.version(1), Some(&first));
    }

    #[test]
    fn a_version_held_is_never_replaced() {
        let mut keys = ContentKeys::first().unwrap();
        let held = keys.newest().unwrap().clone();
        keys.add(ContentKey::new(1).unwrap());
        assert_eq!(keys.keys, vec![held]);
    }

    #[test]
    fn a_seal_key_reads_back_from_its_file_form() {
        let key = SealKey::generate().unwrap();
        let again = SealKey::from_stored(&key.stored()).unwrap();
        assert_eq!(again.public(), key.public());
        assert!(SealKey::from_stored(&StoredSealKey {
            secret: "short".into()
        })
        .is_err());
    }
}
