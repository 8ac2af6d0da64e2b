//! [`needs_you_trust::passkey::check`] over assertions a real browser made:
//! the page tests' way to hold the check to Chromium's WebAuthn
//! (`tests/page/passkey.test.js`). Reads a JSON list on stdin, each item
//! `{"public_key", "rp_id", "origin", "statement", "assertion"}` (the key
//! SEC1 and the statement base64url, the assertion as
//! [`needs_you_trust::passkey::Assertion`]), and prints the list of
//! verdicts, `"ok"` or a refusal's code, one per item.

use std::io::Read as _;

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use needs_you_trust::passkey::{check, Assertion, Expected};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    public_key: String,
    rp_id: String,
    origin: String,
    statement: String,
    assertion: Assertion,
}

fn main() {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .expect("stdin is readable");
    let cases: Vec<Case> = serde_json::from_str(&input).expect("stdin is a list of cases");
    let verdicts: Vec<&str> = cases
        .iter()
        .map(|c| {
            let key = B64.decode(&c.public_key).expect("the key is base64url");
            let statement = B64
                .decode(&c.statement)
                .expect("the statement is base64url");
            let expected = Expected {
                rp_id: &c.rp_id,
                origin: &c.origin,
                statement: &statement,
            };
            match check(&c.assertion, &expected, &key) {
                Ok(()) => "ok",
                Err(refusal) => refusal.code(),
            }
        })
        .collect();
    println!(
        "{}",
        serde_json::to_string(&verdicts).expect("a list of strings")
    );
}
