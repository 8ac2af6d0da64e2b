//! `deploy` and `deploy --dry-run`: the bundle on the Cloudflare account
//! that wrangler is logged in to. Run again, it upgrades the Worker and
//! migrates its database, and changes no secret: each is set only when the
//! Worker has none of that name yet.

use std::collections::BTreeSet;
use std::fs;
use std::time::{Duration, Instant};

use needs_you_reporter::state::write_private;

use serde_json::Value;

use super::bundle::{Bundle, Work};
use super::secrets;
use super::wrangler::Wrangler;
use crate::commands::{account, devices};
use crate::fail::{exit, Fail, Result};
use crate::{login, term};

/// How long a new Worker may take to make its first owner.
const OWNER_WITHIN: Duration = Duration::from_secs(60);
/// What wrangler says, with its code, of a Worker not deployed yet.
const NO_SUCH_WORKER: &str = "10007";

/// The D1 database's name, and its binding's line in `wrangler.toml`.
const DATABASE: &str = "needs-you";
const DATABASE_LINE: &str = "database_name = \"needs-you\"";

/// `deploy --dry-run`: wrangler bundles it as it would deploy it.
pub fn dry_run(bundle: &Bundle, work: &Work, wrangler: &Wrangler) -> Result<i32> {
    let out = work.path().join("out");
    wrangler.output(
        &["deploy", "--dry-run", "--outdir", &out.to_string_lossy()],
        None,
    )?;
    let bytes: u64 = fs::read_dir(&out)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    println!(
        "Dry run: needs-you {}'s Worker bundles with wrangler {} ({} KB); nothing was deployed.",
        bundle.version,
        bundle.wrangler,
        bytes / 1024
    );
    Ok(exit::OK)
}

pub fn deploy(
    bundle: &Bundle,
    work: &Work,
    wrangler: &Wrangler,
    contact: Option<&str>,
) -> Result<i32> {
    if wrangler.output(&["whoami", "--json"], None).is_err() {
        println!("wrangler is not logged in to Cloudflare: logging in (a browser opens).");
        wrangler.interactive(&["login"])?;
    }
    // Only a Worker not deployed yet has no secrets to list: any other
    // failure stops here, since taking it for none would replace them all.
    let have = match wrangler.output(&["secret", "list", "--format", "json"], None) {
        Ok(out) => secret_names(&out).ok_or_else(|| {
            Fail::new(
                exit::REFUSED,
                "wrangler secret list said no list: nothing was changed",
            )
        })?,
        Err(f) if f.message.contains(NO_SUCH_WORKER) => BTreeSet::new(),
        Err(f) => return Err(f),
    };
    // The owner is made with the admin token this run makes, which is never
    // shown: a machine logged in elsewhere could not take it.
    if !have.contains("ADMIN_TOKEN") {
        if let Some(l) = login::load().ok().flatten() {
            return Err(Fail::new(
                exit::REFUSED,
                format!(
                    "this machine is logged in to {}: `needs-you logout` first, so that deploy can make you the new Worker's owner; nothing was changed",
                    l.url
                ),
            ));
        }
    }
    // Asked before anything changes, so that a missing answer changes nothing.
    let subject = match have.contains("VAPID_SUBJECT") {
        true => None,
        false => Some(vapid_subject(contact)?),
    };
    let id = match database_id(&wrangler.output(&["d1", "list", "--json"], None)?) {
        Some(id) => id,
        None => {
            println!("Creating the D1 database {DATABASE}.");
            wrangler.output(&["d1", "create", DATABASE], None)?;
            database_id(&wrangler.output(&["d1", "list", "--json"], None)?).ok_or_else(|| {
                Fail::new(
                    exit::REFUSED,
                    format!("wrangler created {DATABASE}, but does not list it"),
                )
            })?
        }
    };
    let config =
        fs::read_to_string(work.config()).map_err(|e| Fail::new(exit::REFUSED, e.to_string()))?;
    fs::write(work.config(), with_database_id(&config, &id)?)
        .map_err(|e| Fail::new(exit::REFUSED, e.to_string()))?;
    wrangler.output(&["d1", "migrations", "apply", "DB", "--remote"], None)?;
    let url = workers_url(&wrangler.output(&["deploy"], None)?).ok_or_else(|| {
        Fail::new(
            exit::REFUSED,
            "wrangler deployed, but said no workers.dev address",
        )
    })?;
    let mut admin = None;
    if !have.contains("ADMIN_TOKEN") {
        let token = secrets::admin_token()?;
        wrangler.output(&["secret", "put", "ADMIN_TOKEN"], Some(&token))?;
        admin = Some(token);
    }
    if !have.contains("VAPID_PRIVATE_KEY") {
        wrangler.output(
            &["secret", "put", "VAPID_PRIVATE_KEY"],
            Some(&secrets::vapid_private_key()?),
        )?;
    }
    if let Some(subject) = subject {
        wrangler.output(&["secret", "put", "VAPID_SUBJECT"], Some(&subject))?;
    }
    println!("needs-you {} is deployed at {url}.", bundle.version);
    match (admin, login::load().ok().flatten()) {
        (Some(admin), _) => own(&url, &admin)?,
        (None, Some(l)) if l.url == url => {}
        (None, _) => {
            println!(
                "Its admin token was set before: `needs-you setup {url}` with it makes you its owner here."
            );
            return Ok(exit::OK);
        }
    }
    match login::load().ok().flatten() {
        Some(l) if l.is_owner() && l.url == url => devices::pair(None, false),
        _ => Ok(exit::OK),
    }
}

/// Makes this machine the owner of the Worker just deployed with the admin
/// token just set, trying for a while (a new workers.dev address and a new
/// secret take some seconds to reach every edge); failing that, keeps the
/// token in a private file for `needs-you setup`, since it is shown nowhere.
fn own(url: &str, admin: &str) -> Result<()> {
    let since = Instant::now();
    loop {
        match account::make_owner(url, admin) {
            Ok(()) => return Ok(()),
            Err(_) if since.elapsed() < OWNER_WITHIN => std::thread::sleep(Duration::from_secs(3)),
            Err(f) => {
                let kept = login::dir().join("admin-token");
                write_private(&kept, admin.as_bytes()).map_err(|e| {
                    Fail::new(exit::REFUSED, format!("cannot keep the admin token: {e}"))
                })?;
                return Err(Fail::new(
                    f.code,
                    format!(
                        "could not make you the owner ({}); the admin token is kept in {kept} (0600): \
                         NEEDS_YOU_ADMIN_TOKEN=$(cat {kept}) needs-you setup {url}, then delete it",
                        f.message,
                        kept = kept.display(),
                    ),
                ));
            }
        }
    }
}

/// The contact Web Push services are given (`mailto:`), from --contact or
/// the terminal.
fn vapid_subject(contact: Option<&str>) -> Result<String> {
    let contact = match contact {
        Some(c) => c.to_owned(),
        None => term::ask(
            "An email address that push services may write to about your Worker: ",
            false,
        )
        .map_err(|e| Fail::new(exit::USAGE, format!("{e}: give it with --contact EMAIL")))?,
    };
    let contact = contact.trim();
    if contact.starts_with("mailto:") || contact.starts_with("https://") {
        Ok(contact.to_owned())
    } else if contact.contains('@') && !contact.contains(char::is_whitespace) {
        Ok(format!("mailto:{contact}"))
    } else {
        Err(Fail::new(
            exit::USAGE,
            format!("{contact:?} is no email address"),
        ))
    }
}

/// The id of the database named [`DATABASE`] in `wrangler d1 list --json`'s
/// output (anything printed before the list is skipped).
fn database_id(listed: &str) -> Option<String> {
    let list = first_list(listed)?;
    let id = list
        .iter()
        .find(|db| db["name"] == DATABASE)?
        .get("uuid")?
        .as_str()?;
    let uuid_like = id.len() == 36 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    uuid_like.then(|| id.to_owned())
}

/// The configuration with the database's id under its name.
fn with_database_id(config: &str, id: &str) -> Result<String> {
    if config
        .lines()
        .any(|l| l.trim_start().starts_with("database_id"))
    {
        return Ok(config.to_owned());
    }
    let mut found = false;
    let text: Vec<String> = config
        .lines()
        .flat_map(|l| {
            let mut out = vec![l.to_owned()];
            if l.trim() == DATABASE_LINE {
                found = true;
                out.push(format!("database_id = \"{id}\""));
            }
            out
        })
        .collect();
    if !found {
        return Err(Fail::new(
            exit::REFUSED,
            format!("the bundle's wrangler.toml has no {DATABASE_LINE}"),
        ));
    }
    Ok(text.join("\n") + "\n")
}

/// The `https://….workers.dev` address `wrangler deploy` printed.
fn workers_url(said: &str) -> Option<String> {
    said.split_whitespace()
        .find(|w| w.starts_with("https://") && w.trim_end_matches('/').ends_with(".workers.dev"))
        .map(|w| w.trim_end_matches('/').to_owned())
}

/// The names in `wrangler secret list --format json`'s output: its first
/// JSON value, whatever is printed before or after it; `None` without one.
fn secret_names(listed: &str) -> Option<BTreeSet<String>> {
    let list = first_list(listed)?;
    Some(
        list.iter()
            .filter_map(|s| s["name"].as_str().map(str::to_owned))
            .collect(),
    )
}

/// The first JSON list in what wrangler printed: banners may come before it
/// and notices after it.
fn first_list(said: &str) -> Option<Vec<Value>> {
    let at = said.find('[')?;
    serde_json::Deserializer::from_str(&said[at..])
        .into_iter::<Vec<Value>>()
        .next()?
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_is_found_by_name_after_whatever_wrangler_printed_first() {
        let listed = r#"Some banner
[{"uuid": "0b1d1c4e-5a6f-4b8a-9c0d-1e2f3a4b5c6d", "name": "other"},
 {"uuid": "7c9e6679-7425-40de-944b-e07fc1f90ae7", "name": "needs-you"}]"#;
        assert_eq!(
            database_id(listed).as_deref(),
            Some("7c9e6679-7425-40de-944b-e07fc1f90ae7")
        );
        assert_eq!(database_id(r#"[{"uuid": "x", "name": "needs-you"}]"#), None);
        assert_eq!(database_id("[]"), None);
        assert_eq!(database_id("not json"), None);
    }

    #[test]
    fn the_id_goes_under_the_database_s_name_once() {
        let config = "[[d1_databases]]\nbinding = \"DB\"\ndatabase_name = \"needs-you\"\nmigrations_dir = \"migrations\"\n";
        let with = with_database_id(config, "7c9e6679-7425-40de-944b-e07fc1f90ae7").unwrap();
        assert_eq!(
            with,
            "[[d1_databases]]\nbinding = \"DB\"\ndatabase_name = \"needs-you\"\ndatabase_id = \"7c9e6679-7425-40de-944b-e07fc1f90ae7\"\nmigrations_dir = \"migrations\"\n"
        );
        assert_eq!(with_database_id(&with, "other").unwrap(), with);
        assert!(with_database_id("name = \"x\"\n", "id").is_err());
    }

    #[test]
    fn the_address_is_the_workers_dev_one_and_the_secrets_are_named() {
        let said = "Uploaded needs-you (3.1 sec)\nDeployed needs-you triggers (0.4 sec)\n  https://needs-you.ana.workers.dev\n  schedule: 17 3 * * *\n";
        assert_eq!(
            workers_url(said).as_deref(),
            Some("https://needs-you.ana.workers.dev")
        );
        assert_eq!(workers_url("no address"), None);
        let listed = r#"[{"name": "ADMIN_TOKEN", "type": "secret_text"}, {"name": "VAPID_SUBJECT", "type": "secret_text"}]"#;
        assert_eq!(
            secret_names(listed)
                .unwrap()
                .into_iter()
                .collect::<Vec<_>>(),
            ["ADMIN_TOKEN", "VAPID_SUBJECT"]
        );
        // A notice after the list is no reason to take it for none.
        let noticed = format!("{listed}\n\n[wrangler] update available");
        assert_eq!(secret_names(&noticed).unwrap().len(), 2);
        assert_eq!(secret_names("error"), None);
    }

    #[test]
    fn the_push_contact_is_a_mailto_or_an_https_address() {
        assert_eq!(
            vapid_subject(Some("ana@example.com")).unwrap(),
            "mailto:ana@example.com"
        );
        assert_eq!(
            vapid_subject(Some("https://example.com")).unwrap(),
            "https://example.com"
        );
        assert!(vapid_subject(Some("not an address")).is_err());
    }
}
