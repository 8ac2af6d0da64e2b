//! Who this machine is: `setup` (the first owner of a deploy), `login` (a
//! device paired with a code), `logout` and `rotate-token`.

use needs_you_core::api::{NewDevice, NewOwner, NewToken, Right, Rights};
use needs_you_reporter::client::{Client, FailureKind};
use serde_json::{json, Value};

use super::{owner, path_part};
use crate::content_keys;
use crate::fail::{exit, Fail, Result};
use crate::keys::{self, Key, Whose};
use crate::login::{self, Login};
use crate::term;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;

/// A credential that the server sent (`token`), if it starts with `prefix`:
/// nothing else is ever saved as a login.
fn credential(token: &str, prefix: &str) -> Result<String> {
    if token.starts_with(prefix) {
        Ok(token.to_owned())
    } else {
        Err(Fail::new(
            exit::SERVER,
            "the server answered without a credential",
        ))
    }
}

fn client_for(url: &str) -> Result<Client> {
    Client::new(url, None).map_err(|e| Fail::new(exit::USAGE, e.to_string()))
}

/// Whether the server still takes `login`: `Some(false)` when it refuses it
/// (revoked, replaced), `None` when it cannot be asked.
fn still_accepted(login: &Login) -> Option<bool> {
    let client = Client::new(&login.url, Some(&login.token)).ok()?;
    match client.get::<Value>("/v1/devices") {
        Ok(_) => Some(true),
        Err(f) if f.kind == FailureKind::Refused => Some(false),
        Err(_) => None,
    }
}

/// One login per machine: a second is refused while the first works; one
/// the server refuses any more is replaced, so that "log in again" after a
/// revoked login is all it takes.
pub(crate) fn refuse_second_login() -> Result<()> {
    let Some(l) = login::load()? else {
        return Ok(());
    };
    match still_accepted(&l) {
        Some(false) => {
            eprintln!(
                "needs-you: replacing the login to {}, which the server no longer accepts",
                l.url
            );
            Ok(())
        }
        Some(true) => Err(Fail::new(
            exit::REFUSED,
            format!(
                "already logged in to {}; run `needs-you logout` first",
                l.url
            ),
        )),
        None => Err(Fail::new(
            exit::SERVER,
            format!(
                "already logged in to {}, which is out of reach to check; run `needs-you logout` to forget it",
                l.url
            ),
        )),
    }
}

/// A secret from the environment variable `var`, else asked without echo:
/// never from the command line, where `ps` and the shell's history keep it.
pub fn secret(var: &str, prompt: &str) -> Result<String> {
    match std::env::var(var).ok().filter(|t| !t.is_empty()) {
        Some(t) => Ok(t),
        None => term::ask(prompt, true)
            .map_err(|e| Fail::new(exit::USAGE, format!("{e}: set {var} in the environment"))),
    }
}

/// `setup URL`: the first owner of a fresh deploy, logged in here.
pub fn setup(url: &str) -> Result<i32> {
    refuse_second_login()?;
    client_for(url)?;
    let admin = secret(
        "NEEDS_YOU_ADMIN_TOKEN",
        "Admin token (the Worker's ADMIN_TOKEN secret): ",
    )?;
    make_owner(url, &admin)?;
    println!(
        "This machine now holds the owner token, which can do everything: keep it where no agent runs. \
         On a machine where agents run, log in as a device instead (`needs-you pair` here, then \
         `needs-you login URL` there): it may start tasks but not answer them."
    );
    println!("Next: `needs-you pair` to pair your phone.");
    Ok(exit::OK)
}

/// Creates an owner on the Worker at `url` with its `admin` token, named
/// after this machine's user, and logs this machine in as it (what `setup`
/// and `deploy` share). The caller checked there is no other login.
pub(crate) fn make_owner(url: &str, admin: &str) -> Result<()> {
    let anon = client_for(url)?;
    // Made first: an owner the server made is no use without them.
    let key = owner_signing_key()?;
    content_keys::owners()?;
    let admin_client =
        Client::new(anon.base(), Some(admin)).map_err(|e| Fail::new(exit::USAGE, e.to_string()))?;
    let name = std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "me".into());
    let owner: NewOwner = admin_client
        .post("/v1/owners", &json!({"name": name}))
        .map_err(|f| {
            if f.kind == FailureKind::Refused {
                Fail::new(exit::LOGIN, "the server refused that admin token")
            } else {
                f.into()
            }
        })?;
    let token = credential(&owner.token, "nyo_")?;
    let path = login::save(&Login {
        url: anon.base().to_owned(),
        token,
        device_id: None,
        owner: Some(key.fingerprint()),
    })?;
    println!(
        "Created the owner {name:?} on {} and logged in (saved in {}).",
        anon.base(),
        path.display()
    );
    println!(
        "Your owner key signs every answer you give; its fingerprint, which your machines pin: {}",
        key.fingerprint()
    );
    Ok(())
}

/// The owner's signing key: the one kept here already (the machines logged
/// in before pinned it), else a new one, saved.
fn owner_signing_key() -> Result<Key> {
    if let Some(key) = Key::load(Whose::Owner)? {
        return Ok(key);
    }
    let key = Key::generate()?;
    key.save_new(Whose::Owner)?;
    Ok(key)
}

/// A pairing link, `https://host/pair#CODE` or, from the owner's `pair`,
/// `#CODE.SECRET.FINGERPRINT`, or from a device paired under the owner
/// `#CODE..FINGERPRINT`: the server, the code, and the secret and the
/// owner's fingerprint when it carries them.
struct Link {
    server: String,
    code: Option<String>,
    secret: Option<String>,
    owner: Option<String>,
    /// Whether it carries more than a code: it then names an owner.
    dotted: bool,
}

fn split_link(target: &str) -> Link {
    let server = |url: &str| {
        url.trim_end_matches('/')
            .trim_end_matches("/pair")
            .to_owned()
    };
    match target.split_once('#') {
        Some((url, fragment)) if !fragment.is_empty() => {
            let mut parts = fragment.split('.').map(str::to_owned);
            Link {
                server: server(url),
                code: parts.next(),
                secret: parts.next().filter(|s| !s.is_empty()),
                owner: parts.next(),
                dotted: fragment.contains('.'),
            }
        }
        _ => Link {
            server: server(target),
            code: None,
            secret: None,
            owner: None,
            dotted: false,
        },
    }
}

/// Where `login` reads a pairing code that carries its secret: the line
/// `pair` prints sets it for the one command (`NEEDS_YOU_CODE=CODE.SECRET
/// needs-you login URL --owner FP`). A process's environment is its own
/// user's to read; its command line is every user's (`/proc/PID/cmdline`),
/// and a local user who read the secret there could redeem the code first
/// with keys of its own, which the owner's `pair` would vouch for.
pub const CODE_VAR: &str = "NEEDS_YOU_CODE";

/// The code alone of a pairing code or fragment (`CODE.SECRET…`), read as
/// the server reads a typed one (`k7q2 m9xd` is `K7Q2-M9XD`).
fn code_of(code: &str) -> String {
    let code = code.split('.').next().unwrap_or_default().trim();
    needs_you_core::pairing_code::normalize(code)
        .map_or_else(|| code.to_owned(), |(id, secret)| format!("{id}-{secret}"))
}

/// Whether a pairing code or fragment (`CODE.SECRET…`) carries a secret.
fn carries_secret(code: &str) -> bool {
    code.split('.').nth(1).is_some_and(|s| !s.is_empty())
}

/// The pairing code `login` redeems, from where it may come: [`CODE_VAR`]
/// (a code, a fragment or a whole link for the server of `link`), `--code`,
/// the link's fragment, else asked for on the terminal, without echo. A
/// secret given on the command line is refused before anything is sent, and
/// so is a [`CODE_VAR`] left in the environment for another code than the
/// one the command line names: which one the person meant is not ours to
/// guess.
fn pairing_code(link: &Link, code: Option<&str>) -> Result<String> {
    let server = &link.server;
    if link.secret.is_some() || code.is_some_and(carries_secret) {
        return Err(Fail::new(
            exit::USAGE,
            format!(
                "the pairing secret would be on this command line, which every user of this machine can read: paste the line `needs-you pair` prints ({CODE_VAR}=… needs-you login …), or give the code when asked"
            ),
        ));
    }
    let named = code.map(str::to_owned).or(link.code.clone());
    if let Some(given) = std::env::var(CODE_VAR)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
    {
        let from_env = match given.split_once('#') {
            None => given.clone(),
            Some((_, fragment)) => {
                let linked = split_link(&given);
                if &linked.server != server {
                    return Err(Fail::new(
                        exit::USAGE,
                        format!(
                            "{CODE_VAR} holds a link for {}, not {server}",
                            linked.server
                        ),
                    ));
                }
                fragment.to_owned()
            }
        };
        if let Some(named) = named
            .as_deref()
            .filter(|n| code_of(n) != code_of(&from_env))
        {
            return Err(Fail::new(
                exit::USAGE,
                format!(
                    "{CODE_VAR} holds the code {}, not {}: unset it (unset {CODE_VAR}) or give that code",
                    code_of(&from_env),
                    code_of(named)
                ),
            ));
        }
        return Ok(from_env);
    }
    match named {
        Some(c) => Ok(c),
        None => {
            term::ask("Pairing code (from the page or `needs-you pair`): ", true).map_err(|e| {
                Fail::new(
                    exit::USAGE,
                    format!(
                        "{e}: give the pairing link instead: needs-you login '{server}/pair#CODE'"
                    ),
                )
            })
        }
    }
}

/// `login URL|LINK [--allow RIGHTS]`: a pairing code into this machine's
/// device credential. It may always start and stop tasks (what `run` needs);
/// anything more only if asked for here: agents run on this machine, and
/// any of them can read the login file.
pub fn login(target: &str, allow: &Rights, code: Option<&str>, owner: Option<&str>) -> Result<i32> {
    let owner = owner
        .map(|o| {
            let o = o.trim();
            is_fingerprint(o).then(|| o.to_owned()).ok_or_else(|| {
                Fail::new(
                    exit::USAGE,
                    "--owner takes the fingerprint `needs-you pair` printed (43 characters of A-Z, a-z, 0-9, - and _)",
                )
            })
        })
        .transpose()?;
    refuse_second_login()?;
    let link = split_link(target);
    let code = pairing_code(&link, code)?;
    let url = link.server;
    let client = client_for(&url)?;
    // The line `pair` prints for a machine carries the link's secret after
    // the code, `CODE.SECRET`, as the link does after `#`, with `--owner`
    // beside it; a whole fragment, `CODE.SECRET.FINGERPRINT` or
    // `CODE..FINGERPRINT`, reads as the link does.
    let dotted = link.dotted || code.contains('.');
    let mut parts = code.split('.').map(str::to_owned);
    let code = parts.next().unwrap_or_default();
    let secret = parts
        .next()
        .filter(|s| !s.is_empty())
        .or(link.secret.clone());
    let named = parts.next().or(link.owner);
    // A link or line cut short (a chat app's doing) would log in a machine
    // that pinned no owner: refused whole, before anything is sent.
    if named.as_deref().is_some_and(|o| !is_fingerprint(o))
        || (dotted && named.is_none() && owner.is_none())
    {
        return Err(Fail::new(
            exit::USAGE,
            "the link's owner key is cut short or mangled: give the whole link, as it was shown",
        ));
    }
    let owner = owner.or(named);
    let host = needs_you_reporter::terminal::host_name();
    let name = match host.as_str() {
        "" => "needs-you on this machine".to_owned(),
        h => format!("needs-you on {h}"),
    };
    let asked: Rights = Rights::from(
        std::iter::once(Right::Tasks)
            .chain(allow.iter())
            .collect::<Vec<_>>(),
    );
    // A link from the owner's `pair` carries a secret: this command line then
    // makes a key of its own and proves it, for the pairer to vouch for.
    // It makes a seal key too, which the pairer wraps the content key to.
    let keyed = match (&secret, &owner) {
        (Some(secret), Some(_)) => {
            let key = Key::generate()?;
            let seal = content_keys::new_seal_key()?;
            let public = B64.encode(key.public());
            let proof = needs_you_trust::pairing::prove(secret, &public, &seal.public(), &asked)
                .ok_or_else(|| {
                    Fail::new(exit::USAGE, "the pairing link's secret is not base64url")
                })?;
            Some((key, seal, public, proof))
        }
        _ => None,
    };
    let mut body = json!({"code": code, "name": name, "rights": asked});
    if let Some((_, seal, public, proof)) = &keyed {
        body["key"] = json!(public);
        body["seal_key"] = json!(seal.public());
        body["proof"] = json!(proof);
    }
    let device: NewDevice = client.post("/v1/devices", &body)?;
    // Keys left by an earlier login are not the ones just vouched for: a
    // seal key left behind would have `run` wait for a content key that
    // can never come (`content_keys::must_seal`).
    let _ = std::fs::remove_file(keys::path(Whose::Device));
    content_keys::forget_devices();
    if let Some((key, seal, _, _)) = &keyed {
        key.save_new(Whose::Device)?;
        content_keys::save_seal_key(seal)?;
    }
    let path = login::save(&Login {
        url: client.base().to_owned(),
        token: credential(&device.token, "nyd_")?,
        device_id: Some(device.device_id),
        owner: owner.clone(),
    })?;
    println!(
        "Logged in to {} as {name:?} (saved in {}).",
        client.base(),
        path.display()
    );
    println!("{}", what_it_may(&device.rights));
    match &owner {
        Some(fp) => println!(
            "The agents you run here take only answers signed by the owner key {fp}: whoever holds the server cannot answer for you."
        ),
        None => println!(
            "No owner key pinned (--owner): the agents you run here take no answer from afar, since none could be checked. Log in with the line `needs-you pair` prints to pin it."
        ),
    }
    println!("Next: `needs-you run -- claude`.");
    Ok(exit::OK)
}

/// What a device login may do, in a sentence: said when it is made.
fn what_it_may(rights: &Rights) -> String {
    let mut may = vec!["read the list"];
    let mut may_not = Vec::new();
    for (right, words) in [
        (Right::Tasks, "start and stop tasks"),
        (Right::Answer, "answer or approve"),
        (Right::Pair, "pair other devices"),
        (Right::Screen, "see the agents' terminals"),
    ] {
        if rights.has(right) {
            may.push(words);
        } else {
            may_not.push(words);
        }
    }
    let mut line = format!("This machine may {}", may.join(", "));
    if !may_not.is_empty() {
        line.push_str(&format!("; it may not {}", may_not.join(" or ")));
    }
    if !rights.has(Right::Answer) {
        line.push_str(" (so an agent here that reads the login cannot answer another agent; `--allow answer` at login lets it)");
    }
    line + "."
}

/// `logout`: a device credential is revoked first; an owner token only forgotten.
pub fn logout() -> Result<i32> {
    let Some(login) = login::load()? else {
        println!("Not logged in.");
        return Ok(exit::OK);
    };
    if let Some(id) = &login.device_id {
        let client = Client::new(&login.url, Some(&login.token))
            .map_err(|e| Fail::new(exit::LOGIN, e.to_string()))?;
        match client.delete::<Value>(&format!("/v1/devices/{}", path_part(id)?)) {
            // Revoked already: forgetting it is all that is left.
            Ok(_) => {}
            Err(f) if f.kind == FailureKind::Refused => {}
            Err(f) => return Err(f.into()),
        }
    }
    let accepted = login.is_owner().then(|| still_accepted(&login)).flatten();
    login::forget()?;
    let _ = std::fs::remove_file(keys::path(Whose::Device));
    if !login.is_owner() {
        content_keys::forget_devices();
    }
    if login.is_owner() && accepted == Some(false) {
        println!("Forgot the owner token on this machine; the server no longer accepted it.");
    } else if login.is_owner() {
        println!(
            "Forgot the owner token on this machine. It still works wherever else you keep it \
             (`needs-you rotate-token` elsewhere replaces it)."
        );
    } else {
        println!("Revoked this machine's device credential and forgot it.");
    }
    Ok(exit::OK)
}

/// `rotate-token`: a new owner token in place of one that may have leaked.
/// The login file is rewritten once before the server is asked, so that the
/// new token, which the server shows only once, has somewhere to go.
pub fn rotate_token() -> Result<i32> {
    let (mut login, client) = owner("replaces the owner token")?;
    login::save(&login)?;
    let r: NewToken = client.post("/v1/owners/me/token", &json!({}))?;
    let token = credential(&r.token, "nyo_")?;
    login.token = token.clone();
    login::save(&login).map_err(|e| {
        // The old token is gone already: this is the only copy of the new one.
        Fail::new(
            exit::REFUSED,
            format!("{e}; keep the new owner token by hand: {token}"),
        )
    })?;
    println!("Replaced the owner token: the old one no longer works, wherever it was kept.");
    Ok(exit::OK)
}

/// Whether `s` could be a key's fingerprint: base64url of 32 bytes.
pub(super) fn is_fingerprint(s: &str) -> bool {
    s.len() == 43
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pairing_link_gives_the_server_the_code_and_the_owners_fingerprint() {
        let parts = |l: Link| (l.server, l.code, l.owner);
        assert_eq!(
            split_link("https://x.example/pair#K7Q2-M9XD.c2VjcmV0.ZnA").secret,
            Some("c2VjcmV0".into())
        );
        assert_eq!(
            parts(split_link("https://x.example/pair#K7Q2-M9XD")),
            ("https://x.example".into(), Some("K7Q2-M9XD".into()), None)
        );
        assert_eq!(
            parts(split_link("https://x.example/pair#K7Q2-M9XD.c2VjcmV0.ZnA")),
            (
                "https://x.example".into(),
                Some("K7Q2-M9XD".into()),
                Some("ZnA".into())
            )
        );
        // From a device paired under the owner: the fingerprint, no secret.
        let handed_on = split_link("https://x.example/pair#K7Q2-M9XD..ZnA");
        assert_eq!(
            (handed_on.secret.as_deref(), handed_on.dotted),
            (None, true)
        );
        // Cut short after the code's dot: it still names an owner.
        assert!(split_link("https://x.example/pair#K7Q2-M9XD.").dotted);
        assert!(!split_link("https://x.example/pair#K7Q2-M9XD").dotted);
        assert_eq!(
            parts(handed_on),
            (
                "https://x.example".into(),
                Some("K7Q2-M9XD".into()),
                Some("ZnA".into())
            )
        );
        assert_eq!(
            parts(split_link("https://x.example/")),
            ("https://x.example".into(), None, None)
        );
        assert_eq!(
            parts(split_link("http://127.0.0.1:8787")),
            ("http://127.0.0.1:8787".into(), None, None)
        );
    }

    #[test]
    fn a_code_is_the_same_code_however_it_is_typed() {
        assert_eq!(code_of("k7q2 m9xd.SeCrEt"), "K7Q2-M9XD");
        assert_eq!(code_of("K7Q2M9XD"), code_of("K7Q2-M9XD.secret.owner"));
        assert_eq!(code_of("KOQ2-M9XD"), code_of("K0Q2-M9XD"), "O read as 0");
        assert_ne!(code_of("ZZZZ-ZZZZ"), code_of("K7Q2-M9XD"));
        // What is no code stays as it was typed, to be said as such.
        assert_eq!(code_of("nope.x"), "nope");
    }
}
