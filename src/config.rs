//! Settings read from `wrangler.toml` vars and secrets.

use worker::Env;

use crate::channels::webpush::{PushServices, Vapid};
use crate::channels::Refused;
use crate::delivery::Timing;

/// What a notifier's alarm needs, read once per run.
pub struct Settings {
    pub timing: Timing,
    /// How long a channel gets to answer one delivery.
    pub send_timeout: std::time::Duration,
    /// The Web Push identity: `None` when not set up, `Err` when malformed.
    pub vapid: Option<Result<Vapid, Refused>>,
    /// Where a push may go: a subscription stored before a service was
    /// taken off the list is not sent to.
    pub push_services: PushServices,
}

impl Settings {
    pub fn read(env: &Env) -> Settings {
        Settings {
            timing: Timing {
                delay_ms: notify_delay_ms(env),
                retry_base_ms: retry_base_ms(env),
            },
            send_timeout: send_timeout(env),
            vapid: vapid(env),
            push_services: push_services(env),
        }
    }
}

/// Milliseconds a dialog must stay open before the owner is notified.
pub fn notify_delay_ms(env: &Env) -> f64 {
    number_var(env, "NOTIFY_DELAY_MS", 15_000.0)
}

/// How long a channel gets to answer one delivery: `NOTIFY_TIMEOUT_MS`,
/// 10 s by default.
fn send_timeout(env: &Env) -> std::time::Duration {
    std::time::Duration::from_millis(number_var(env, "NOTIFY_TIMEOUT_MS", 10_000.0) as u64)
}

/// How long a pairing code works: `PAIRING_TTL_S`, 10 minutes by default.
pub fn pairing_ttl_ms(env: &Env) -> f64 {
    number_var(env, "PAIRING_TTL_S", 600.0) * 1000.0
}

/// First retry delay of a failed delivery; doubles with each attempt.
fn retry_base_ms(env: &Env) -> f64 {
    number_var(env, "NOTIFY_RETRY_MS", 2_000.0)
}

/// A setting in milliseconds or seconds; the default when unset or not a
/// number. A fraction is dropped (`2500.7` reads as 2500): reading it would
/// bring a float parser into the wasm for no setting that needs one.
fn number_var(env: &Env, name: &str, default: f64) -> f64 {
    env.var(name)
        .ok()
        .and_then(|v| whole_number(v.to_string().trim()))
        .map_or(default, |n| n as f64)
}

/// `text` as a whole number, a decimal fraction after it dropped.
fn whole_number(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    whole.parse().ok()
}

/// A string setting, from the secrets or the vars (both are plain strings to
/// the runtime); `None` when unset or blank.
fn text(env: &Env, name: &str) -> Option<String> {
    env.secret(name)
        .map(|s| s.to_string())
        .or_else(|_| env.var(name).map(|v| v.to_string()))
        .ok()
        .filter(|s| !s.trim().is_empty())
}

/// The Worker's Web Push identity, from the secrets `VAPID_PRIVATE_KEY` and
/// `VAPID_SUBJECT`: `None` when Web Push is not set up, `Err` when a secret is
/// malformed (the message names it, never its value).
pub fn vapid(env: &Env) -> Option<Result<Vapid, Refused>> {
    let key = text(env, "VAPID_PRIVATE_KEY")?;
    let subject = text(env, "VAPID_SUBJECT").unwrap_or_default();
    Some(Vapid::new(&key, &subject))
}

/// Where push subscriptions may point: the browsers' push services, the
/// hosts in `PUSH_SERVICE_HOSTS` (comma-separated; `.example.org` for every
/// host under it), and `http://127.0.0.1` with `ALLOW_LOOPBACK_PUSH=true`,
/// for local runs and tests only.
pub fn push_services(env: &Env) -> PushServices {
    let loopback = text(env, "ALLOW_LOOPBACK_PUSH").is_some_and(|v| v.trim() == "true");
    PushServices::new(
        &text(env, "PUSH_SERVICE_HOSTS").unwrap_or_default(),
        loopback,
    )
}

/// Whether the route that panics on purpose is open (`ALLOW_TEST_PANIC=true`):
/// for the test that reads a panic's message in the log, never in production.
pub fn test_panic_allowed(env: &Env) -> bool {
    text(env, "ALLOW_TEST_PANIC").is_some_and(|v| v.trim() == "true")
}

#[cfg(test)]
mod tests {
    use super::whole_number;

    #[test]
    fn settings_read_whole_numbers_and_drop_a_fraction() {
        assert_eq!(whole_number("15000"), Some(15_000));
        assert_eq!(whole_number("15000.0"), Some(15_000));
        assert_eq!(whole_number("2500.7"), Some(2_500));
        for bad in ["", "-1", "1e4", "1.5e3", "abc", ".5", "1.2.3"] {
            assert_eq!(whole_number(bad), None, "{bad}");
        }
    }
}
