//! A pairing code as people read it off a screen and type it: 8 letters of
//! Crockford's base32 (`K7Q2-M9XD`), read forgivingly, the same way by the
//! Worker that redeems it and by the command line that is handed one.

/// The letters of pairing codes: Crockford's base32, without I, L, O and U,
/// so that a code read off a screen is typed right.
pub const LETTERS: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A typed code as it is stored, in its two halves (the id that finds its
/// row, and the secret checked against the row's hash): upper case, without
/// spaces or the dash, and the letters people mistake for digits read as
/// those digits; `None` for what is no code.
pub fn normalize(typed: &str) -> Option<(String, String)> {
    let clean: String = typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            other => other,
        })
        .collect();
    let valid = clean.len() == 8 && clean.bytes().all(|b| LETTERS.contains(&b));
    valid.then(|| (clean[..4].to_owned(), clean[4..].to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_codes_are_read_forgivingly() {
        assert_eq!(normalize("ab0c-d1ef"), Some(("AB0C".into(), "D1EF".into())));
        assert_eq!(
            normalize(" abOc dlef "),
            Some(("AB0C".into(), "D1EF".into()))
        );
        assert_eq!(normalize("ABCD-EFG"), None);
        assert_eq!(normalize("ABCD-EFGU"), None, "U is not a code letter");
    }
}
