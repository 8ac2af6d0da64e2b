//! `needs-you`: the person's command line. Set up or log in once, then start
//! agents under watch (`needs-you run -- claude`), see what needs you, pair a
//! phone, set channels.
//!
//! * [`args`]: the command line and `--help`.
//! * [`config`]: the login file.
//! * [`run`]: running a command as a task.
//! * [`show`]: lists for a person, cut to the terminal.
//! * [`term`]: asking, the width, QR codes.
//!
//! Every failure is one line on stderr and an exit code from [`exit`].

pub mod args;
pub mod config;
pub mod run;
pub mod show;
pub mod term;

use std::ffi::OsString;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use needs_you_core::answer::to_line;
use serde_json::{json, Value};

use crate::api::{Client, Failure, FailureKind};
use args::Command;
use config::Login;

/// Exit codes scripts can rely on (also in `--help`).
pub mod exit {
    pub const OK: i32 = 0;
    /// The server refused the request and said why.
    pub const REFUSED: i32 = 1;
    pub const USAGE: i32 = 2;
    /// Not logged in, or the login was refused (revoked, unknown).
    pub const LOGIN: i32 = 3;
    /// The server is out of reach or failing.
    pub const SERVER: i32 = 4;
    /// `run`: the command was not found.
    pub const NOT_FOUND: i32 = 127;
}

/// A failed command: its exit code and the one line that says why.
#[derive(Debug)]
pub struct Fail {
    pub code: i32,
    pub message: String,
}

impl Fail {
    pub fn new(code: i32, message: impl Into<String>) -> Fail {
        Fail {
            code,
            message: message.into(),
        }
    }
}

impl From<Failure> for Fail {
    fn from(f: Failure) -> Fail {
        match f.kind {
            FailureKind::Unreachable | FailureKind::Server => Fail::new(exit::SERVER, f.message),
            FailureKind::Refused => Fail::new(
                exit::LOGIN,
                format!(
                    "the server refused this login ({}); log in again with `needs-you login URL`",
                    f.message
                ),
            ),
            FailureKind::Rejected => Fail::new(exit::REFUSED, f.message),
        }
    }
}

type Result<T> = std::result::Result<T, Fail>;

/// Runs the command line; returns the exit code.
pub fn main(args: Vec<OsString>) -> i32 {
    // Like any Unix tool, a reader that went away (`needs-you tasks | head`)
    // ends it quietly, not with a panic at the next write. Programs that
    // `run` starts get the default back anyway.
    // SAFETY: setting a signal's disposition to its default, before any
    // thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let command = match args::parse(args) {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("needs-you: {} (see `needs-you --help`)", to_line(&msg));
            return exit::USAGE;
        }
    };
    match dispatch(command) {
        Ok(code) => code,
        Err(f) => {
            // One line, whatever a server or a URL put in the message.
            eprintln!("needs-you: {}", to_line(&f.message));
            f.code
        }
    }
}

fn dispatch(command: Command) -> Result<i32> {
    match command {
        Command::Help => {
            print!("{}", args::HELP);
            Ok(exit::OK)
        }
        Command::Version => {
            println!("needs-you {}", env!("CARGO_PKG_VERSION"));
            Ok(exit::OK)
        }
        Command::Setup { url } => setup(&url),
        Command::Login { target } => login(&target),
        Command::Logout => logout(),
        Command::RotateToken => rotate_token(),
        Command::Run(opts) => {
            let (_, client) = logged_in()?;
            run::run(&client, opts)
        }
        Command::Exec {
            env_file,
            status_file,
            command,
        } => run::exec(&env_file, &status_file, command),
        Command::Ls { watch, json } => {
            let (_, client) = logged_in()?;
            if watch {
                show::watch(&client)
            } else {
                let list = client.get("/v1/needs-you")?;
                if json {
                    print_json(&json!({"questions": list["questions"]}));
                } else {
                    print!(
                        "{}",
                        show::questions(&list["questions"], now_ms(), term::width())
                    );
                }
                Ok(exit::OK)
            }
        }
        Command::Tasks { json } => {
            let (_, client) = logged_in()?;
            let tasks = client.get("/v1/tasks")?;
            if json {
                print_json(&tasks);
            } else {
                print!("{}", show::tasks(&tasks["tasks"], now_ms(), term::width()));
            }
            Ok(exit::OK)
        }
        Command::Dismiss { question } => {
            let (_, client) = logged_in()?;
            client.post(
                &format!("/v1/questions/{}/dismiss", path_part(&question)?),
                &json!({}),
            )?;
            println!("Dismissed {question}.");
            Ok(exit::OK)
        }
        Command::Answer { question, text } => answer(&question, &text),
        Command::Pair { json } => pair(json),
        Command::Channels { json } => {
            let (_, client) = owner("manages channels")?;
            let list = client.get("/v1/channels")?;
            if json {
                print_json(&list);
            } else {
                print!("{}", show::channels(&list["channels"]));
            }
            Ok(exit::OK)
        }
        Command::ChannelSet {
            kind,
            url,
            priority,
        } => channel_set(&kind, &url, priority),
        Command::ChannelRemove { kind } => {
            let (_, client) = owner("manages channels")?;
            client.delete(&format!("/v1/channels/{kind}"))?;
            println!("Removed the {kind} channel.");
            Ok(exit::OK)
        }
        Command::TestPush { json } => test_push(json),
    }
}

pub fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis() as f64
}

fn print_json(v: &Value) {
    println!("{}", serde_json::to_string_pretty(v).unwrap_or_default());
}

/// An id that goes into a URL path: letters, digits, `_` and `-` only.
fn path_part(id: &str) -> Result<&str> {
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

fn logged_in() -> Result<(Login, Client)> {
    let login = config::load()
        .map_err(|e| Fail::new(exit::LOGIN, e))?
        .ok_or_else(|| {
            Fail::new(
                exit::LOGIN,
                "not logged in: run `needs-you login URL` (or `needs-you setup URL` after deploying)",
            )
        })?;
    let client =
        Client::new(&login.url, Some(&login.token)).map_err(|e| Fail::new(exit::LOGIN, e))?;
    Ok((login, client))
}

/// The credential in a server's answer (`token`, starting with `prefix`):
/// nothing else is ever saved as a login.
fn credential(answer: &Value, prefix: &str) -> Result<String> {
    answer["token"]
        .as_str()
        .filter(|t| t.starts_with(prefix))
        .map(str::to_owned)
        .ok_or_else(|| Fail::new(exit::SERVER, "the server answered without a credential"))
}

/// The owner's login, for what only the owner may do (`what`: "manages
/// channels").
fn owner(what: &str) -> Result<(Login, Client)> {
    let (login, client) = logged_in()?;
    if !login.is_owner() {
        return Err(Fail::new(
            exit::REFUSED,
            format!("only the owner's login {what}; this machine is a paired device"),
        ));
    }
    Ok((login, client))
}

fn client_for(url: &str) -> Result<Client> {
    Client::new(url, None).map_err(|e| Fail::new(exit::USAGE, e))
}

fn refuse_second_login() -> Result<()> {
    if let Some(l) = config::load().map_err(|e| Fail::new(exit::LOGIN, e))? {
        return Err(Fail::new(
            exit::REFUSED,
            format!(
                "already logged in to {}; run `needs-you logout` first",
                l.url
            ),
        ));
    }
    Ok(())
}

/// A secret from the environment variable `var`, else asked without echo:
/// never from the command line, where `ps` and the shell's history keep it.
fn secret(var: &str, prompt: &str) -> Result<String> {
    match std::env::var(var).ok().filter(|t| !t.is_empty()) {
        Some(t) => Ok(t),
        None => term::ask(prompt, true).map_err(|e| Fail::new(exit::USAGE, e)),
    }
}

/// `setup URL`: the first owner of a fresh deploy, logged in here.
fn setup(url: &str) -> Result<i32> {
    refuse_second_login()?;
    let anon = client_for(url)?;
    let admin = secret(
        "NEEDS_YOU_ADMIN_TOKEN",
        "Admin token (the Worker's ADMIN_TOKEN secret): ",
    )?;
    let admin_client =
        Client::new(anon.base(), Some(&admin)).map_err(|e| Fail::new(exit::USAGE, e))?;
    let name = std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "me".into());
    let owner = admin_client
        .post("/v1/owners", &json!({"name": name}))
        .map_err(|f| {
            if f.kind == FailureKind::Refused {
                Fail::new(exit::LOGIN, "the server refused that admin token")
            } else {
                f.into()
            }
        })?;
    let token = credential(&owner, "nyo_")?;
    let path = config::save(&Login {
        url: anon.base().to_owned(),
        token,
        device_id: None,
    })
    .map_err(|e| Fail::new(exit::REFUSED, e))?;
    println!(
        "Created the owner {name:?} on {} and logged in (saved in {}).",
        anon.base(),
        path.display()
    );
    println!("Next: `needs-you pair` to pair your phone, then `needs-you run -- claude`.");
    Ok(exit::OK)
}

/// Splits a pairing link `https://host/pair#CODE` into the server and the code.
fn split_link(target: &str) -> (String, Option<String>) {
    match target.split_once('#') {
        Some((url, code)) if !code.is_empty() => (
            url.trim_end_matches('/')
                .trim_end_matches("/pair")
                .to_owned(),
            Some(code.to_owned()),
        ),
        _ => (
            target
                .trim_end_matches('/')
                .trim_end_matches("/pair")
                .to_owned(),
            None,
        ),
    }
}

/// `login URL|LINK`: a pairing code into this machine's device credential.
fn login(target: &str) -> Result<i32> {
    refuse_second_login()?;
    let (url, code) = split_link(target);
    let client = client_for(&url)?;
    let code = match code {
        Some(c) => c,
        None => term::ask("Pairing code (from the page or `needs-you pair`): ", false)
            .map_err(|e| Fail::new(exit::USAGE, e))?,
    };
    let host = crate::terminal::host_name();
    let name = match host.as_str() {
        "" => "needs-you on this machine".to_owned(),
        h => format!("needs-you on {h}"),
    };
    let device = client.post("/v1/devices", &json!({"code": code, "name": name}))?;
    let path = config::save(&Login {
        url: client.base().to_owned(),
        token: credential(&device, "nyd_")?,
        device_id: device["device_id"].as_str().map(str::to_owned),
    })
    .map_err(|e| Fail::new(exit::REFUSED, e))?;
    println!(
        "Logged in to {} as {name:?} (saved in {}).",
        client.base(),
        path.display()
    );
    println!("Next: `needs-you run -- claude`.");
    Ok(exit::OK)
}

/// `logout`: a device credential is revoked first; an owner token only forgotten.
fn logout() -> Result<i32> {
    let Some(login) = config::load().map_err(|e| Fail::new(exit::LOGIN, e))? else {
        println!("Not logged in.");
        return Ok(exit::OK);
    };
    if let Some(id) = &login.device_id {
        let client =
            Client::new(&login.url, Some(&login.token)).map_err(|e| Fail::new(exit::LOGIN, e))?;
        match client.delete(&format!("/v1/devices/{}", path_part(id)?)) {
            // Revoked already: forgetting it is all that is left.
            Ok(_) => {}
            Err(f) if f.kind == FailureKind::Refused => {}
            Err(f) => return Err(f.into()),
        }
    }
    config::forget().map_err(|e| Fail::new(exit::REFUSED, e))?;
    if login.is_owner() {
        println!(
            "Forgot the owner token on this machine. It still works wherever else you keep it."
        );
    } else {
        println!("Revoked this machine's device credential and forgot it.");
    }
    Ok(exit::OK)
}

/// `rotate-token`: a new owner token in place of one that may have leaked.
/// The login file is rewritten once before the server is asked, so that the
/// new token, which the server shows only once, has somewhere to go.
fn rotate_token() -> Result<i32> {
    let (mut login, client) = owner("replaces the owner token")?;
    config::save(&login).map_err(|e| Fail::new(exit::REFUSED, e))?;
    let r = client.post("/v1/owners/me/token", &json!({}))?;
    let token = credential(&r, "nyo_")?;
    login.token = token.clone();
    config::save(&login).map_err(|e| {
        // The old token is gone already: this is the only copy of the new one.
        Fail::new(
            exit::REFUSED,
            format!("{e}; keep the new owner token by hand: {token}"),
        )
    })?;
    println!("Replaced the owner token: the old one no longer works, wherever it was kept.");
    Ok(exit::OK)
}

/// `answer QUESTION TEXT`: queued like the page's, then followed until it is
/// typed or refused (15 s at most: the agent's machine may be asleep).
fn answer(question: &str, text: &str) -> Result<i32> {
    let (_, client) = logged_in()?;
    let id = path_part(question)?;
    let queued = client.post(
        &format!("/v1/questions/{id}/answers"),
        &json!({"text": text}),
    )?;
    let answer_id = queued["answer_id"].as_str().unwrap_or_default();
    let path = format!("/v1/answers/{}", path_part(answer_id)?);
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let a = client.get(&path)?;
        let state = a["state"].as_str().unwrap_or("");
        match state {
            "typed" => {
                println!("Typed into the agent's terminal.");
                return Ok(exit::OK);
            }
            "failed" => {
                let reason = a["reason"].as_str().unwrap_or("");
                return Err(Fail::new(exit::REFUSED, format!("not typed: {reason}")));
            }
            _ if std::time::Instant::now() >= deadline => {
                if state == "delivered" {
                    println!(
                        "The agent's machine has it; it has not said yet whether it was typed."
                    );
                } else {
                    println!("Sent; the agent's machine has not taken it yet (it will when its relay reconnects).");
                }
                return Ok(exit::OK);
            }
            _ => std::thread::sleep(Duration::from_millis(300)),
        }
    }
}

fn pair(json_out: bool) -> Result<i32> {
    let (_, client) = logged_in()?;
    let p = client.post("/v1/pairings", &json!({}))?;
    if json_out {
        print_json(&p);
        return Ok(exit::OK);
    }
    let url = p["url"].as_str().unwrap_or_default();
    let minutes = ((p["expires_at"].as_f64().unwrap_or(0.0) - now_ms()) / 60_000.0).round();
    print!(
        "{}",
        term::qr(url).map_err(|e| Fail::new(exit::REFUSED, e))?
    );
    println!("\nScan it with the phone's camera, or open: {url}");
    println!(
        "Code: {} (works once, for {minutes:.0} minutes; on another computer: needs-you login {})",
        p["code"].as_str().unwrap_or_default(),
        client.base()
    );
    Ok(exit::OK)
}

fn channel_set(kind: &str, url: &str, priority: Option<u8>) -> Result<i32> {
    let (_, client) = owner("manages channels")?;
    let mut body = json!({"url": url});
    if kind == "ntfy" {
        if let Some(t) = std::env::var("NEEDS_YOU_NTFY_TOKEN")
            .ok()
            .filter(|t| !t.is_empty())
        {
            body["token"] = json!(t);
        }
        if let Some(p) = priority {
            body["priority"] = json!(p);
        }
    } else {
        body["secret"] = json!(secret(
            "NEEDS_YOU_WEBHOOK_SECRET",
            "Webhook secret (16 characters or more): "
        )?);
    }
    let shown = client.put(&format!("/v1/channels/{kind}"), &body)?;
    println!("Set the {kind} channel: {}", show::channel_line(&shown));
    println!("Try it: needs-you test-push");
    Ok(exit::OK)
}

fn test_push(json_out: bool) -> Result<i32> {
    let (_, client) = owner("sends a test push")?;
    let r = client.post("/v1/channels/test", &json!({}))?;
    let results = r["results"].as_array().cloned().unwrap_or_default();
    if json_out {
        print_json(&r);
    } else if results.is_empty() {
        println!("No channel to test: set one (`needs-you channels set ntfy URL`) or turn on notifications on the page.");
    } else {
        print!("{}", show::test_results(&results));
    }
    let all_ok = !results.is_empty() && results.iter().all(|x| x["ok"] == json!(true));
    Ok(if all_ok { exit::OK } else { exit::REFUSED })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pairing_link_gives_the_server_and_the_code() {
        assert_eq!(
            split_link("https://x.example/pair#K7Q2-M9XD"),
            ("https://x.example".into(), Some("K7Q2-M9XD".into()))
        );
        assert_eq!(
            split_link("https://x.example/"),
            ("https://x.example".into(), None)
        );
        assert_eq!(
            split_link("http://127.0.0.1:8787"),
            ("http://127.0.0.1:8787".into(), None)
        );
    }

    #[test]
    fn ids_in_paths_are_checked() {
        assert!(path_part("q_3e9a").is_ok());
        assert!(path_part("../owners").is_err());
        assert!(path_part("").is_err());
    }
}
