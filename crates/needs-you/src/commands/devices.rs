//! The owner's devices: `pair` (a code for the next device, which the
//! owner's key vouches for once it proves its keys), `devices` (each with
//! the key vouched for under its id) and `devices revoke`.

use needs_you_core::api::{Devices, Pairing, Revoked, Rights};
use serde_json::{json, Value};

use super::account::CODE_VAR;
use super::{logged_in, now_ms, path_part, print_json, trusting};
use crate::content_keys;
use crate::fail::{exit, Fail, Result};
use crate::keys::{Key, Whose};
use crate::term;

/// `pair [--rights R]`: a one-time code for another device, as a QR code,
/// a link and a line to paste on a machine; it grants `rights`, by default
/// all this login may do. The owner's login then waits until the code is
/// used, and vouches for the device's key with the owner key
/// ([`trusting`]): the link carries, after `#`, a secret that proves the
/// key the device made, and the fingerprint that pins the owner's key.
pub fn pair(rights: Option<Rights>, json_out: bool) -> Result<i32> {
    let (login, client) = logged_in()?;
    let key = match login.is_owner() {
        true => Key::load(Whose::Owner)?,
        false => None,
    };
    // The record it vouches by, read before any code is made: one that
    // cannot be read stops here, not once a device has used the code.
    if key.is_some() {
        trusting::vouched_keys()?;
    }
    let body = match &rights {
        Some(r) => json!({ "rights": r }),
        None => json!({}),
    };
    let mut p: Pairing = client.post("/v1/pairings", &body)?;
    // The code goes into a line the person pastes into a shell: only a
    // code's own characters, whatever the server sent.
    if p.code.is_empty()
        || p.code.len() > 32
        || !p
            .code
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(Fail::new(
            exit::SERVER,
            "the server's pairing code is not one: nothing was printed",
        ));
    }
    let secret = match &key {
        Some(k) => {
            let secret = trusting::new_secret()?;
            // Made here, not from the server's `url`: the secret must stay
            // after `#`, which no browser sends to a server.
            p.url = format!(
                "{}/pair#{}.{secret}.{}",
                client.base(),
                p.code,
                k.fingerprint()
            );
            Some(secret)
        }
        None => {
            // A device's login hands on the owner it pinned, without a
            // secret (only the owner key vouches for keys): what the person
            // writes on the device it pairs then leaves it only sealed.
            if let Some(fp) = &login.owner {
                p.url = format!("{}/pair#{}..{fp}", client.base(), p.code);
            }
            None
        }
    };
    // With the secret, the machine that pastes it proves its keys as a
    // phone does, and gets the content key.
    let code = match &secret {
        Some(s) => format!("{}.{s}", p.code),
        None => p.code.clone(),
    };
    let line = login_line(client.base(), &code, login.owner.as_deref());
    if json_out {
        // One line: a script reads the first line, and gets it all.
        let mut v = serde_json::to_value(&p).unwrap_or_default();
        v["login"] = json!(line);
        println!("{v}");
    } else {
        let minutes = ((p.expires_at as f64 - now_ms()) / 60_000.0).round();
        print!(
            "{}",
            term::qr(&p.url)
                .map_err(|e| Fail::new(exit::REFUSED, format!("cannot make a QR code: {e}")))?
        );
        println!("\nScan it with the phone's camera, or open: {}", p.url);
        println!(
            "Code: {} (works once, for {minutes:.0} minutes). On a machine where agents run, paste:\n  {line}",
            p.code
        );
        let granted = p.rights.to_list();
        println!(
            "The device it pairs may read the list{}.",
            if granted.is_empty() {
                String::new()
            } else {
                format!(" and: {}", granted.replace(',', ", "))
            }
        );
    }
    let (Some(key), Some(secret)) = (key, secret) else {
        return Ok(exit::OK);
    };
    // An owner set up before there was a content key makes it now.
    let content = content_keys::owners()?;
    if !json_out {
        println!("Waiting for the device…");
    }
    let said = |v: Value, words: String| {
        if json_out {
            println!("{v}");
        } else {
            println!("{words}");
        }
    };
    match trusting::wait_and_certify(
        &client,
        &key,
        &p.pairing_id,
        &secret,
        p.expires_at,
        rights.as_ref(),
        &content,
    )? {
        trusting::Paired::Certified(d) => said(
            json!({"paired": d.device_id, "name": d.name, "certified": true}),
            format!(
                "Paired {:?}. Your key vouched for its own, so your machines take the answers it signs, and gave it the content key that opens what they seal.",
                d.name
            ),
        ),
        trusting::Paired::Keyless(d) => said(
            json!({"paired": d.device_id, "name": d.name, "certified": false}),
            format!(
                "Paired {:?}. It holds no key of its own, so it answers nothing on a machine that pinned yours.",
                d.name
            ),
        ),
        trusting::Paired::Expired => {
            return Err(Fail::new(exit::REFUSED, "the code expired unused"))
        }
    }
    Ok(exit::OK)
}

/// The line that logs a machine in with `code`, pinning `owner` (when this
/// login knows the owner's key): what `pair` prints for an agent's machine.
/// The code, with its secret, is in the command's environment
/// ([`CODE_VAR`]), never on its command line.
fn login_line(url: &str, code: &str, owner: Option<&str>) -> String {
    let mut line = format!("{CODE_VAR}={code} needs-you login {url}");
    if let Some(fp) = owner {
        line.push_str(&format!(" --owner {fp}"));
    }
    line
}

/// `devices [--json]`: the live devices (a device sees itself only), each
/// with the key the owner's machine vouched for under its id: the server's
/// ids are handles, the keys are what answers are checked against.
pub fn devices(json_out: bool) -> Result<i32> {
    let (login, client) = logged_in()?;
    let list: Devices = client.get("/v1/devices")?;
    let vouched = match login.is_owner() {
        true => trusting::vouched_keys()?,
        false => Default::default(),
    };
    if json_out {
        // Beside the server's list, what the owner's key vouches for that
        // the server does not list, as the text shows it.
        let mut out = serde_json::to_value(&list).unwrap_or_default();
        let unlisted: Vec<serde_json::Value> = crate::display::unlisted(&list.devices, &vouched)
            .into_iter()
            .map(|(id, fp)| serde_json::json!({"device_id": id, "key": fp}))
            .collect();
        if let Some(obj) = out.as_object_mut() {
            obj.insert("vouched_unlisted".into(), unlisted.into());
        }
        print_json(&out);
    } else {
        print!(
            "{}",
            crate::display::devices(&list.devices, &vouched, now_ms())
        );
    }
    Ok(exit::OK)
}

/// `devices revoke ID`: says what went with it.
pub fn revoke_device(device: &str) -> Result<i32> {
    let (login, client) = logged_in()?;
    let path = format!("/v1/devices/{}", path_part(device)?);
    // The owner's key says so too, to every machine that pinned it: the
    // server could not keep a revoked device answering there.
    let key = match login.is_owner() {
        true => Key::load(Whose::Owner)?,
        false => None,
    };
    // The key this machine vouched for under the id named here goes first,
    // whatever the server then says of the revocation (a server that
    // refused it would otherwise keep the key in every list signed after),
    // whatever it says that device's key is or what went with it: a device
    // another device paired holds no key the owner's vouched for, and an id
    // the server adds here strikes nothing.
    // The turn of the content key this strike owes is noted first, and kept
    // until a turn is done: a server that fails the turn (or anything
    // before it) cannot have it forgotten with the struck key, and the next
    // revoke turns it.
    if key.is_some() && trusting::vouched_keys()?.contains_key(device) {
        content_keys::owe()?;
    }
    let struck = match &key {
        Some(key) => trusting::strike(&client, key, device)?,
        None => None,
    };
    let mut rotated = None;
    if let Some(key) = &key {
        // What is sealed from now on, a revoked device that held the content
        // key cannot open. One that never held it turns no key.
        if content_keys::owed() {
            let turned = trusting::vouched(&client, key)
                .and_then(|remaining| content_keys::rotate(&client, key, &remaining));
            rotated = Some(turned.map_err(|f| {
                Fail::new(
                    f.code,
                    format!(
                        "{}: the key is struck, and your content key has yet to turn past it: run `needs-you devices revoke {device}` again",
                        f.message
                    ),
                )
            })?);
        }
    }
    // The server's part last: what it answers changes nothing above. A
    // 404 after a strike or a turn here: the server no longer lists the
    // device, and has nothing of it to revoke.
    let r: Option<Revoked> = match client.delete(&path) {
        Ok(r) => Some(r),
        Err(f) if f.status == Some(404) && (struck.is_some() || rotated.is_some()) => None,
        Err(f) => return Err(f.into()),
    };
    match &r {
        Some(r) => {
            let others = r.devices.len().saturating_sub(1);
            println!(
                "Revoked {}{}{}.",
                r.device_id,
                match others {
                    0 => String::new(),
                    n => format!(", {n} device(s) it paired"),
                },
                match r.tasks.len() {
                    0 => String::new(),
                    n => format!(" and {n} task(s) they created"),
                }
            );
        }
        None => {
            println!("The server answered 404 for {device}: it lists no such device to revoke.")
        }
    }
    match (&key, &struck) {
        (Some(_), Some(fp)) => println!(
            "Your key no longer vouches for its key {}…: every machine that pinned yours refuses what it signs once it sees your new device list, and within 7 days where the server keeps that list from it.",
            &fp[..fp.len().min(11)]
        ),
        (Some(_), None) => println!(
            "This machine vouched for no key under {device}, so no key was struck from your device list."
        ),
        _ => {}
    }
    if let Some((version, given)) = rotated {
        println!(
            "What is sealed from now on is under version {version} of your content key, which {given} remaining device(s) got and the revoked one did not; machines take it at their next `needs-you run`."
        );
    }
    Ok(exit::OK)
}
