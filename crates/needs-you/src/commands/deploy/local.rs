//! `deploy --local [--port N]`: the same bundle under `wrangler dev` on
//! 127.0.0.1, with a fresh local D1, migrated, and this machine's
//! `needs-you` logged in as its owner, for as long as it runs. Ctrl-C (or a
//! TERM) stops wrangler and forgets that login, whose server is then gone.

use std::fs;
use std::net::TcpStream;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use needs_you_reporter::client::Client;
use needs_you_reporter::state::write_private;
use serde_json::Value;

use super::bundle::Work;
use super::secrets;
use super::wrangler::Wrangler;
use crate::commands::account;
use crate::fail::{exit, Fail, Result};
use crate::login;

/// How long wrangler may take to answer its first request: it starts
/// workerd and loads the wasm.
const STARTS_WITHIN: Duration = Duration::from_secs(120);
const POLL: Duration = Duration::from_millis(200);

/// Set by a signal that asks this run to end.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn stop(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

pub fn serve(work: &Work, wrangler: &Wrangler, port: u16) -> Result<i32> {
    account::refuse_second_login()?;
    let url = format!("http://127.0.0.1:{port}");
    if TcpStream::connect(("127.0.0.1", port)).is_ok() {
        return Err(Fail::new(
            exit::USAGE,
            format!("127.0.0.1:{port} is taken: --port N names another"),
        ));
    }
    // From here on a Ctrl-C ends the run through its clean-up, which
    // removes the private folder and its secrets.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic.
        unsafe {
            libc::signal(sig, stop as *const () as libc::sighandler_t);
        }
    }
    let admin = secrets::admin_token()?;
    let vars = format!(
        "ADMIN_TOKEN={admin}\nVAPID_PRIVATE_KEY={}\nVAPID_SUBJECT=mailto:local@localhost.invalid\n",
        secrets::vapid_private_key()?
    );
    write_private(&work.path().join(".dev.vars"), vars.as_bytes()).map_err(|e| {
        Fail::new(
            exit::REFUSED,
            format!("cannot write the local secrets: {e}"),
        )
    })?;
    let state = work.path().join("state");
    let state = state.to_string_lossy();
    wrangler.output(
        &[
            "d1",
            "migrations",
            "apply",
            "DB",
            "--local",
            "--persist-to",
            &state,
        ],
        None,
    )?;
    let log_path = work.path().join("wrangler.log");
    let log = fs::File::create(&log_path).map_err(|e| Fail::new(exit::REFUSED, e.to_string()))?;
    let port_arg = port.to_string();
    let mut child = wrangler.spawn(
        &[
            "dev",
            "--ip",
            "127.0.0.1",
            "--port",
            &port_arg,
            "--persist-to",
            &state,
            "--show-interactive-dev-session=false",
        ],
        log,
    )?;
    let served = started(&mut child, &url).and_then(|()| {
        account::make_owner(&url, &admin)?;
        println!(
            "needs-you is serving on {url}, with a fresh local D1 (the page: {url}/). \
             Start an agent under watch in another terminal: needs-you run -- claude. \
             Ctrl-C stops it."
        );
        Ok(())
    });
    let ended = match served {
        Ok(()) => wait(&mut child),
        Err(f) => Err(with_log(f, &log_path)),
    };
    end(&mut child);
    forget_login_to(&url);
    ended.map(|()| exit::OK)
}

/// Waits until the Worker answers its health check.
fn started(child: &mut Child, url: &str) -> Result<()> {
    let client = Client::new(url, None).map_err(|e| Fail::new(exit::USAGE, e.to_string()))?;
    let since = Instant::now();
    loop {
        if STOP.load(Ordering::SeqCst) {
            return Err(Fail::new(exit::REFUSED, "stopped before it started"));
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Fail::new(
                exit::SERVER,
                format!("wrangler dev ended ({status})"),
            ));
        }
        if client.get::<Value>("/v1/health").is_ok() {
            return Ok(());
        }
        if since.elapsed() > STARTS_WITHIN {
            return Err(Fail::new(
                exit::SERVER,
                format!("{url} did not answer within {STARTS_WITHIN:?}"),
            ));
        }
        std::thread::sleep(POLL);
    }
}

/// Until a signal, or until wrangler ends by itself (a failure).
fn wait(child: &mut Child) -> Result<()> {
    while !STOP.load(Ordering::SeqCst) {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Fail::new(
                exit::SERVER,
                format!("wrangler dev ended ({status})"),
            ));
        }
        std::thread::sleep(POLL);
    }
    Ok(())
}

/// Ends wrangler's process group: TERM, then KILL if it lingers.
fn end(child: &mut Child) {
    let group = child.id() as i32;
    // SAFETY: kill on a process group this run made.
    unsafe { libc::kill(-group, libc::SIGTERM) };
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(5) {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let _ = child.wait();
}

/// The login this run made names a server that is gone with it.
fn forget_login_to(url: &str) {
    if let Ok(Some(l)) = login::load() {
        if l.url == url && login::forget().is_ok() {
            println!("Stopped; forgot this machine's login to {url}.");
        }
    }
}

/// A failure, with the end of wrangler's log, which says why.
fn with_log(f: Fail, log: &std::path::Path) -> Fail {
    let text = fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    match tail.last() {
        Some(last) => Fail::new(
            f.code,
            format!("{}; wrangler said: {}", f.message, last.trim()),
        ),
        None => f,
    }
}
