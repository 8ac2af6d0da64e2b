//! `needs-you --version`: this machine's version and that of the Worker it
//! is logged in to, and what to run when they differ.

use needs_you_reporter::client::Client;
use serde_json::Value;

use crate::fail::{exit, Result};
use crate::login;

pub const LOCAL: &str = env!("CARGO_PKG_VERSION");

pub fn version() -> Result<i32> {
    println!("needs-you {LOCAL}");
    let Ok(Some(login)) = login::load() else {
        return Ok(exit::OK);
    };
    let url = &login.url;
    let health = Client::new(url, None)
        .ok()
        .and_then(|c| c.get::<Value>("/v1/health").ok());
    let Some(health) = health else {
        println!("the Worker at {url}: out of reach");
        return Ok(exit::OK);
    };
    match health["version"].as_str() {
        Some(v) if v == LOCAL => println!("the Worker at {url}: {v}"),
        Some(v) => println!("the Worker at {url}: {v}; {}", advice(v)),
        None => println!(
            "the Worker at {url} says no version (it is older than this one): {}",
            UPGRADE_WORKER
        ),
    }
    Ok(exit::OK)
}

const UPGRADE_WORKER: &str =
    "`needs-you deploy` upgrades it (from a clone: bash scripts/deploy.sh)";

/// What to run when the Worker is at `worker` and this machine is not.
fn advice(worker: &str) -> String {
    if newer(worker, LOCAL) {
        format!(
            "this machine is behind it: `npm i -g needs-you@{worker}` (or `cargo install needs-you --version {worker}`)"
        )
    } else {
        format!("the Worker is behind this machine: {UPGRADE_WORKER}")
    }
}

/// Whether version `a` is newer than `b`, number by number (`0.10.0` >
/// `0.9.1`); a part that is no number counts as 0.
fn newer(a: &str, b: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        v.split(['.', '-', '+'])
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    parts(a) > parts(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_compared_number_by_number() {
        assert!(newer("0.10.0", "0.9.1"));
        assert!(newer("1.0.0", "0.99.99"));
        assert!(!newer("0.1.0", "0.1.0"));
        assert!(!newer("0.1.0", "0.2.0"));
    }

    #[test]
    fn the_advice_names_the_side_that_is_behind() {
        assert!(advice("999.0.0").contains("npm i -g needs-you@999.0.0"));
        assert!(advice("0.0.1").contains("needs-you deploy"));
    }
}
