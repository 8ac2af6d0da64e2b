//! Random ids and credentials, their hashes, and the clock.
//!
//! Credentials are 32 bytes from `getrandom`, hex-encoded behind a prefix that
//! says what they are (`nyo_` owner, `nyt_` task, `nyd_` device). Only their
//! SHA-256 is stored.

use needs_you_core::pairing_code::LETTERS as CODE_LETTERS;
use sha2::{Digest, Sha256};

/// A typed pairing code read as it is stored ([`needs_you_core::pairing_code`]).
pub use needs_you_core::pairing_code::normalize as normalize_code;

pub const OWNER_PREFIX: &str = "nyo_";
pub const TASK_PREFIX: &str = "nyt_";
pub const DEVICE_PREFIX: &str = "nyd_";

/// A pairing code's two halves, 4 letters each (20 bits): the id that finds
/// its row, and the secret checked against the row's hash.
pub fn pairing_code() -> (String, String) {
    let mut buf = [0u8; 8];
    getrandom::fill(&mut buf).expect("crypto.getRandomValues is available");
    let letters: String = buf
        .iter()
        .map(|b| CODE_LETTERS[usize::from(b & 31)] as char)
        .collect();
    (letters[..4].to_owned(), letters[4..].to_owned())
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    // getrandom reads crypto.getRandomValues on wasm; it cannot fail there.
    getrandom::fill(&mut buf).expect("crypto.getRandomValues is available");
    hex(&buf)
}

/// `N` random bytes.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf).expect("crypto.getRandomValues is available");
    buf
}

/// A new credential: the prefix and 32 random bytes.
pub fn new_token(prefix: &str) -> String {
    format!("{prefix}{}", random_hex(32))
}

/// A new id for an owner, a task or a question: 16 random bytes.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", random_hex(16))
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 0xf) as usize] as char);
    }
    out
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> f64 {
    worker::Date::now().as_millis() as f64
}

/// The moment `ms` (since the epoch), for a Durable Object's alarm.
pub fn at(ms: f64) -> worker::ScheduledTime {
    worker::ScheduledTime::new(worker::js_sys::Date::new(&wasm_bindgen::JsValue::from_f64(
        ms,
    )))
}
