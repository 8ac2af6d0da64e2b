//! Whom this machine answers to, as `needs-you run` hands it to the agent:
//! the owner key's fingerprint it pinned at login, and the file of the
//! owner's content key it seals with. Only their names and the reading of
//! the first live here; what is checked with them is `needs_you_trust`'s.

/// The environment variable that names the owner key's fingerprint.
pub const OWNER_VAR: &str = "NEEDS_YOU_OWNER";

/// The environment variable that names the file of the owner's content key
/// on an agent's machine (`needs-you run` sets it from the login): a path,
/// never a key.
pub const KEYS_VAR: &str = "NEEDS_YOU_CONTENT_KEYS";

/// The owner this machine takes answers from, if it was logged in under one.
pub fn pinned_owner() -> Option<String> {
    std::env::var(OWNER_VAR)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}
