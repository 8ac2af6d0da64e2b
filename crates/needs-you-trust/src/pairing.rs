//! The proof a new device sends with its keys when it pairs: the HMAC-SHA256
//! of its signing key, its seal key and the rights it asks for
//! ([`needs_you_core::signed::proof_message`]) under the pairing link's
//! secret, which travels after `#` and never reaches a server. The owner's
//! command line certifies only keys whose proof holds, so a server that
//! swaps in keys of its own, or more rights, gets nothing signed.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use needs_you_core::api::Rights;
use needs_you_core::signed::proof_message;
use sha2::Sha256;

/// The HMAC of the proof of `key`, `seal_key` (base64url) and the rights
/// `asked` under `secret` (base64url), fed and ready.
fn proof_mac(secret: &str, key: &str, seal_key: &str, asked: &Rights) -> Option<Hmac<Sha256>> {
    let secret = B64.decode(secret).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&secret).ok()?;
    mac.update(&proof_message(key, seal_key, asked));
    Some(mac)
}

/// The proof of a device's signing `key` and `seal_key` (base64url) and of
/// the rights it `asked` for, under the pairing link's `secret`: what a
/// device sends with its keys when it pairs.
pub fn prove(secret: &str, key: &str, seal_key: &str, asked: &Rights) -> Option<String> {
    Some(
        B64.encode(
            proof_mac(secret, key, seal_key, asked)?
                .finalize()
                .into_bytes(),
        ),
    )
}

/// Whether `proof` is the HMAC of `key`, `seal_key` and `asked` under `secret`.
pub fn proves(secret: &str, key: &str, seal_key: &str, asked: &Rights, proof: &str) -> bool {
    match (proof_mac(secret, key, seal_key, asked), B64.decode(proof)) {
        (Some(mac), Ok(proof)) => mac.verify_slice(&proof).is_ok(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_links_secret_proves_a_key() {
        let secret = B64.encode([1u8; 16]);
        let (key, seal) = ("BPhone-key", "BPhone-seal-key");
        let asked = Rights::from_list("tasks");
        // The bytes written out here, not through `proof_message`: the page
        // proves the same bytes in JavaScript.
        let mut mac = Hmac::<Sha256>::new_from_slice(&[1u8; 16]).unwrap();
        mac.update(b"needs-you pairing v2\nBPhone-key\nBPhone-seal-key\ntasks");
        let proof = B64.encode(mac.finalize().into_bytes());
        assert_eq!(prove(&secret, key, seal, &asked), Some(proof.clone()));
        assert!(proves(&secret, key, seal, &asked, &proof));
        assert!(!proves(&secret, "BServer-key", seal, &asked, &proof));
        assert!(
            !proves(&secret, key, "BServer-seal-key", &asked, &proof),
            "a seal key swapped"
        );
        assert!(
            !proves(
                &secret,
                key,
                seal,
                &Rights::from_list("tasks,answer"),
                &proof
            ),
            "more rights than it asked for"
        );
        assert!(!proves(&B64.encode([2u8; 16]), key, seal, &asked, &proof));
        assert!(!proves(&secret, key, seal, &asked, "not-base64!"));
    }
}
