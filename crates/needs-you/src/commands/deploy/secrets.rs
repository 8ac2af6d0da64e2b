//! The Worker's secrets, made here and handed to wrangler on its standard
//! input: never on a command line, never in a file but a local run's
//! `.dev.vars` (0600, in this run's private folder).

use base64::Engine;

use crate::fail::{exit, Fail, Result};

fn random<const N: usize>() -> Result<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)
        .map_err(|e| Fail::new(exit::REFUSED, format!("no randomness: {e}")))?;
    Ok(bytes)
}

/// `ADMIN_TOKEN`: 32 random bytes, in hex.
pub fn admin_token() -> Result<String> {
    Ok(random::<32>()?.iter().map(|b| format!("{b:02x}")).collect())
}

/// `VAPID_PRIVATE_KEY`: a P-256 private scalar, base64url without padding
/// (the Worker derives the public key from it). 32 random bytes are one
/// unless they are zero or not below the group's order, which p256 checks.
pub fn vapid_private_key() -> Result<String> {
    loop {
        let bytes = random::<32>()?;
        if p256::SecretKey::from_slice(&bytes).is_ok() {
            return Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_admin_token_is_64_hex_digits_and_never_twice_the_same() {
        let (a, b) = (admin_token().unwrap(), admin_token().unwrap());
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn the_web_push_key_is_a_p256_scalar_in_base64url() {
        let key = vapid_private_key().unwrap();
        assert_eq!(key.len(), 43);
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&key)
            .unwrap();
        assert!(p256::SecretKey::from_slice(&bytes).is_ok());
    }
}
