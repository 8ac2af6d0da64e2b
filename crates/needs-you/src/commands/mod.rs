//! The commands, one module per command or small family, and what they all
//! need: the login this machine holds, and the ids that go into URL paths.
//!
//! * `account`: `setup`, `login`, `logout`, `rotate-token`.
//! * `devices`: `pair`, `devices`, `devices revoke`.
//! * `trusting`: the owner's key vouching for devices and signing the device list.
//! * `questions`: `ls`, `tasks`, `answer`, `dismiss`, `show`.
//! * `compose`: an answer as `answer` sends it, composed apart from the prompt and the network.
//! * `cards`: the cards `ls` shows, built here from each question's request.
//! * `watch`: `ls --watch`, on the live list's socket.
//! * `history`: `log`, the history searched on this machine.
//! * `rules`: `rules` and `rules revoke`.
//! * `channels`: `channels` and `test-push`.
//! * `run`: `run -- COMMAND`, a task of its own; `codex`: `run -- codex`'s TUI against a private app-server.
//! * `deploy`: the prebuilt Worker onto Cloudflare, or served here; `version`: `--version`.

pub mod account;
pub mod cards;
pub mod channels;
pub mod codex;
pub mod compose;
pub mod deploy;
pub mod devices;
pub mod history;
pub mod questions;
pub mod rules;
pub mod run;
pub mod trusting;
pub mod version;
pub mod watch;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use needs_you_reporter::client::Client;
use serde::Serialize;

use crate::fail::{exit, Fail, Result};
use crate::login::{self, Login};

/// This machine's login and a client that sends its credential.
pub fn logged_in() -> Result<(Login, Client)> {
    let login = login::load()?.ok_or_else(|| {
        Fail::new(
            exit::LOGIN,
            "not logged in: run `needs-you login URL` (or `needs-you setup URL` after deploying)",
        )
    })?;
    let client = Client::new(&login.url, Some(&login.token))
        .map_err(|e| Fail::new(exit::LOGIN, e.to_string()))?;
    Ok((login, client))
}

/// The owner's login, for what only the owner may do (`what`: "manages
/// channels").
pub fn owner(what: &str) -> Result<(Login, Client)> {
    let (login, client) = logged_in()?;
    if !login.is_owner() {
        return Err(Fail::new(
            exit::REFUSED,
            format!("only the owner's login {what}; this machine is a paired device"),
        ));
    }
    Ok((login, client))
}

/// An id that goes into a URL path: letters, digits, `_` and `-` only.
pub fn path_part(id: &str) -> Result<&str> {
    if !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(id)
    } else {
        Err(Fail::new(
            exit::USAGE,
            format!("{id:?} is not an id (see `needs-you ls --json`)"),
        ))
    }
}

pub fn print_json(v: &impl Serialize) {
    println!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
}

/// A number of seconds as a person says it: "7 days", "2 hours", "30 minutes".
pub fn human(s: u64) -> String {
    match s {
        s if s % 86_400 == 0 => format!("{} days", s / 86_400),
        s if s % 3600 == 0 => format!("{} hours", s / 3600),
        s => format!("{} minutes", s.div_ceil(60)),
    }
}

pub fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_in_paths_are_checked() {
        assert!(path_part("q_3e9a").is_ok());
        assert!(path_part("../owners").is_err());
        assert!(path_part("").is_err());
    }
}
