//! Sending a report: the foreground hands it to a detached copy of this binary
//! and returns; that copy makes the request, with 3 seconds to do it.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use needs_you_core::Report;

use crate::state::{self, StateDir};

/// The request's whole budget.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);
/// The detached sender exits on its own this long after it started.
const CHILD_DEADLINE: Duration = Duration::from_millis(3500);

/// Where reports go, from `NEEDS_YOU_URL` and `NEEDS_YOU_TOKEN`.
pub struct Target {
    pub base: String,
    pub token: String,
}

impl Target {
    pub fn from_env() -> Result<Target, String> {
        let url = std::env::var("NEEDS_YOU_URL").unwrap_or_default();
        let token = std::env::var("NEEDS_YOU_TOKEN").unwrap_or_default();
        if url.is_empty() {
            return Err("NEEDS_YOU_URL is not set; run `report-prompt doctor`".into());
        }
        if token.is_empty() {
            return Err("NEEDS_YOU_TOKEN is not set; run `report-prompt doctor`".into());
        }
        Ok(Target {
            base: check_base_url(&url)?,
            token,
        })
    }
}

/// HTTPS anywhere; plain HTTP only to this machine (tests, `wrangler dev`).
pub fn check_base_url(url: &str) -> Result<String, String> {
    let base = url.trim().trim_end_matches('/');
    if base.starts_with("https://") {
        return Ok(base.to_owned());
    }
    if let Some(rest) = base.strip_prefix("http://") {
        let host = rest.split('/').next().unwrap_or("");
        let host = match host.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => host,
        };
        let loopback = host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
        if loopback || matches!(host, "localhost" | "[::1]") {
            return Ok(base.to_owned());
        }
        return Err(format!(
            "NEEDS_YOU_URL must use https:// (plain http is only for localhost): {base}"
        ));
    }
    Err(format!("NEEDS_YOU_URL must start with https:// : {base}"))
}

/// Starts the detached sender with the report on its stdin, and returns
/// without waiting. The child gets no stdout or stderr of ours: a CLI waits for
/// its hook's pipes to close, and must not wait for the network.
pub fn hand_off(report: &Report, state_dir: &Path) -> Result<(), String> {
    let body = serde_json::to_vec(report).map_err(|e| format!("cannot encode the report: {e}"))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find myself: {e}"))?;
    let mut child = Command::new(exe)
        .arg("__send")
        .arg("--state-dir")
        .arg(state_dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the sender: {e}"))?;
    let mut stdin = child.stdin.take().expect("stdin was piped");
    stdin
        .write_all(&body)
        .map_err(|e| format!("cannot hand the report over: {e}"))?;
    Ok(())
}

/// `report-prompt __send`: the detached child. Its failures go to the state
/// directory's log, since nobody reads its stderr.
pub fn run_detached_child(state_dir: Option<PathBuf>) -> i32 {
    std::thread::spawn(|| {
        std::thread::sleep(CHILD_DEADLINE);
        std::process::exit(0);
    });
    let dir = StateDir::open(state::resolve(state_dir)).ok();
    let log = |line: String| match &dir {
        Some(d) => d.log(&line),
        None => eprintln!("report-prompt: {line}"),
    };
    let mut body = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut body) {
        log(format!("cannot read the report: {e}"));
        return 0;
    }
    let target = match Target::from_env() {
        Ok(t) => t,
        Err(e) => {
            log(e);
            return 0;
        }
    };
    match post_report(&target, &body) {
        Ok(status) if (200..300).contains(&status) => {}
        Ok(status) => log(format!("the server refused a report: HTTP {status}")),
        Err(e) => log(format!("could not reach {}: {e}", target.base)),
    }
    0
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(REQUEST_TIMEOUT))
        .http_status_as_error(false)
        .user_agent(concat!("report-prompt/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

pub fn post_report(target: &Target, body: &[u8]) -> Result<u16, String> {
    let resp = agent()
        .post(format!("{}/v1/reports", target.base))
        .header("authorization", format!("Bearer {}", target.token))
        .header("content-type", "application/json")
        .send(body)
        .map_err(|e| e.to_string())?;
    Ok(resp.status().as_u16())
}

/// A GET for `doctor`: the status and the body.
pub fn get(target: &Target, path: &str, auth: bool) -> Result<(u16, String), String> {
    let mut req = agent().get(format!("{}{path}", target.base));
    if auth {
        req = req.header("authorization", format!("Bearer {}", target.token));
    }
    let mut resp = req.call().map_err(|e| e.to_string())?;
    let status = resp.status().as_u16();
    let body = resp.body_mut().read_to_string().unwrap_or_default();
    Ok((status, body))
}

#[cfg(test)]
mod tests {
    use super::check_base_url;

    #[test]
    fn https_anywhere_http_only_locally() {
        assert_eq!(
            check_base_url("https://x.example/").unwrap(),
            "https://x.example"
        );
        assert!(check_base_url("http://127.0.0.1:8787").is_ok());
        assert!(check_base_url("http://localhost:8787/").is_ok());
        assert!(check_base_url("http://[::1]:8787").is_ok());
        assert!(check_base_url("http://example.com").is_err());
        assert!(check_base_url("http://127.0.0.1.evil.com").is_err());
        assert!(check_base_url("ftp://x").is_err());
    }
}
