//! The owner's key vouching for devices, through a server it does not trust:
//! after `pair`, the new device's key checked against the proof only the
//! pairing link's secret can make, then its certificate signed; and the
//! owner's device list, signed anew whenever a device joins or goes
//! (`needs_you_core::signed`).

use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use needs_you_core::api::{Device, Devices, PairedDevice, PairingState, Right, Rights};
use needs_you_core::signed::{
    Certificate, DeviceList, Envelope, CERTIFICATE_LIFETIME_MS, DEVICE_LIST_LIFETIME_MS, VERSION,
};
use needs_you_reporter::client::Client;
use needs_you_trust::pairing::proves;
use needs_you_trust::sealing::ContentKeys;
use needs_you_trust::verify::{fingerprint, owner_signed};
use serde_json::{json, Value};

use super::{now_ms, path_part};
use crate::fail::{exit, Fail, Result};
use crate::keys::{self, Key, Whose};
use crate::login::{self, Login};
use needs_you_reporter::state::write_private;

/// How often `pair` asks whether its code was used.
const ASK_EVERY: Duration = Duration::from_millis(500);

/// What became of a pairing `pair` waited on.
pub enum Paired {
    /// A device that signs: its key proved, certified, listed.
    Certified(PairedDevice),
    /// A device with no key (a command line logged in on an agent's
    /// machine): it may do what its rights say, and answers nothing signed.
    Keyless(PairedDevice),
    /// Nobody used the code in time.
    Expired,
}

/// A new pairing secret: 16 random bytes, base64url. The link carries it
/// after `#`, which no browser sends to a server.
pub fn new_secret() -> Result<String> {
    keys::random_id()
}

/// This device, as `GET /v1/devices` shows it to itself.
pub fn this_device(client: &Client) -> Result<Option<Device>> {
    let me: Devices = client.get("/v1/devices")?;
    Ok(me.devices.into_iter().next())
}

/// `device`'s certificate, if the owner's key `owner` signed it for this
/// very `key`: what its signed answers carry. `None` when there is none, or
/// someone between changed it.
pub fn own_certificate(device: &Device, owner: &str, key: &Key) -> Option<Envelope> {
    let mine = B64.encode(key.public());
    device
        .certificate
        .clone()
        .and_then(|c| serde_json::from_value::<Envelope>(c).ok())
        .filter(|c| {
            owner_signed::<Certificate>(owner, c)
                .is_ok_and(|cert| cert.owner == owner && cert.key == mine)
        })
}

/// What this login signs its answers and takings back with: its key, the
/// owner it signs for, and, for a device's key, the certificate the owner's
/// key signed for it, carried in every envelope.
pub struct Signer {
    key: Key,
    pub owner: String,
    certificate: Option<Envelope>,
}

impl Signer {
    /// `what` signed, the certificate beside it.
    pub fn sign(&self, what: &impl serde::Serialize) -> Envelope {
        let mut envelope = self.key.sign_json(what);
        envelope.certificate = self.certificate.clone().map(Box::new);
        envelope
    }
}

/// This login's [`Signer`]: the owner's key, or a device's with its
/// certificate. A device that may answer but holds no vouched-for key is
/// told how to get one: its answers would be refused on every machine. One
/// that may not answer signs nothing, and the server says so.
pub fn signer(login: &Login, client: &Client) -> Result<Option<Signer>> {
    let load = Key::load;
    if login.is_owner() {
        // The owner's own key names itself.
        return Ok(load(Whose::Owner)?.map(|key| Signer {
            owner: key.fingerprint(),
            key,
            certificate: None,
        }));
    }
    let Some(me) = this_device(client)?.filter(|d| d.rights.has(Right::Answer)) else {
        return Ok(None);
    };
    let unvouched = || {
        Fail::new(
            exit::REFUSED,
            "this command line holds no key your owner key vouched for, so every machine would refuse its answers: log in with the link `needs-you pair` shows on your own machine",
        )
    };
    let key = load(Whose::Device)?.ok_or_else(unvouched)?;
    let owner = login.owner.clone().ok_or_else(unvouched)?;
    let certificate = own_certificate(&me, &owner, &key).ok_or_else(unvouched)?;
    Ok(Some(Signer {
        key,
        owner,
        certificate: Some(certificate),
    }))
}

/// Waits until pairing `pairing_id` is used (or `expires_at`, ms, passes);
/// a device that sent its keys is certified by `key` once their proof under
/// `secret` holds, given every version of the `content` key wrapped to its
/// seal key, and added to the owner's device list. A proof that does not
/// hold means a key was changed on its way: that device is revoked, and the
/// failure says so.
pub fn wait_and_certify(
    client: &Client,
    key: &Key,
    pairing_id: &str,
    secret: &str,
    expires_at: i64,
    asked: Option<&Rights>,
    content: &ContentKeys,
) -> Result<Paired> {
    let path = format!("/v1/pairings/{}", path_part(pairing_id)?);
    let deadline = Instant::now()
        + Duration::from_millis((expires_at as f64 - now_ms()).max(0.0) as u64 + 1000);
    let device = loop {
        let state: PairingState = client.get(&path)?;
        if let Some(d) = state.device {
            break d;
        }
        if Instant::now() >= deadline {
            return Ok(Paired::Expired);
        }
        std::thread::sleep(ASK_EVERY);
    };
    let (Some(device_key), Some(proof)) = (&device.key, &device.proof) else {
        return Ok(Paired::Keyless(device));
    };
    let seal_key = device.seal_key.clone().unwrap_or_default();
    let proved = device.asked.clone().unwrap_or_default();
    if !proves(secret, device_key, &seal_key, &proved, proof) {
        let _ = client.delete::<Value>(&format!("/v1/devices/{}", path_part(&device.device_id)?));
        return Err(Fail::new(
            exit::REFUSED,
            format!(
                "the keys the server gave for {:?} are not the ones the device made: someone between them changed them. That device is revoked; pair again, and tell whoever runs the server",
                device.name
            ),
        ));
    }
    let device_fp = B64
        .decode(device_key)
        .map(|k| fingerprint(&k))
        .map_err(|_| Fail::new(exit::SERVER, "the new device's key is not base64url"))?;
    // The id is the server's word, which no proof covers: it must not file
    // this key where another one already stands (a later revocation of that
    // id would strike this key and leave the other answering).
    if let Some(clash) = id_clash(&certified()?, &device.device_id, &device_fp) {
        return Err(Fail::new(
            exit::REFUSED,
            format!(
                "the server named the new device {:?} {clash}: nothing was vouched for. Pair again, and tell whoever runs the server",
                device.name
            ),
        ));
    }
    let owner = key.fingerprint();
    let (vouched, wrapped) = content
        .for_device(&owner, &device.device_id, &seal_key)
        .map_err(|e| {
            Fail::new(
                exit::REFUSED,
                format!("cannot give {:?} the content key: {e}", device.name),
            )
        })?;
    let certificate = Certificate {
        v: VERSION,
        owner: owner.clone(),
        device_id: device.device_id.clone(),
        key: device_key.clone(),
        seal_key: Some(seal_key.clone()),
        // The versions of the content key it is given, which alone it takes.
        content_keys: vouched,
        // What the device proved it asked for and `pair` asked for, whatever
        // the server says the device got.
        rights: match asked {
            Some(a) => device.rights.and(&proved).and(a),
            None => device.rights.and(&proved),
        },
        expires_at: now_ms() as i64 + CERTIFICATE_LIFETIME_MS,
    };
    let envelope = key.sign_json(&certificate);
    let _: Value = client.put(
        &format!("/v1/devices/{}/certificate", path_part(&device.device_id)?),
        &json!({ "certificate": envelope, "content_keys": wrapped }),
    )?;
    remember(&device.device_id, &device_fp)?;
    change_list(client, key, |devices| {
        if certificate.rights.has(Right::Answer) && !devices.contains(&device_fp) {
            devices.push(device_fp.clone());
        }
    })?;
    Ok(Paired::Certified(device))
}

/// How near its end a certificate is signed anew: a week, so that a device
/// keeps answering while the owner's command line runs now and then.
const RENEW_WITHIN_MS: i64 = 7 * 24 * 3600 * 1000;
/// How often the owner's command line looks for such certificates.
const RENEW_CHECK_EVERY_MS: f64 = 24.0 * 3600.0 * 1000.0;

/// Once a day, as the owner's command line runs: [`renew_due`], quietly
/// unless it renewed something, and the device list signed anew for
/// [`DEVICE_LIST_LIFETIME_MS`], so that agents' machines keep taking the
/// devices' answers (a list past its life vouches for nobody there). Nothing
/// here ever fails the command that ran; what could not be done is tried
/// again next time.
pub fn renew_now_and_then() {
    let stamp = login::dir().join("certificates-checked");
    let checked = std::fs::read_to_string(&stamp)
        .ok()
        .and_then(|t| t.trim().parse::<f64>().ok());
    if checked.is_some_and(|at| now_ms() - at < RENEW_CHECK_EVERY_MS) {
        return;
    }
    let Ok(Some(key)) = Key::load(keys::Whose::Owner) else {
        return;
    };
    let Ok((login, client)) = super::logged_in() else {
        return;
    };
    if !login.is_owner() {
        return;
    }
    // Only an owner who vouched for a device has a list that matters.
    let Ok(record) = certified() else {
        return;
    };
    let listed = record.is_empty() || change_list(&client, &key, |_| {}).is_ok();
    if let (Ok(renewed), true) = (renew_due(&client, &key), listed) {
        if !renewed.is_empty() {
            // Named, so that a device the owner forgot is noticed and revoked.
            let names: Vec<String> = renewed
                .iter()
                .map(|n| needs_you_core::text::line(n))
                .collect();
            eprintln!(
                "needs-you: signed anew, for 30 days, the certificate of {} (`needs-you devices revoke ID` ends one)",
                names.join(", ")
            );
        }
        let _ = write_private(&stamp, now_ms().to_string());
    }
}

/// Signs anew, for [`CERTIFICATE_LIFETIME_MS`] from now, the certificate of
/// every device this machine vouched for (and has not struck) that ends
/// within a week (`RENEW_WITHIN_MS`) or ended less than a week ago: same
/// id, same key, the rights it had (fewer, if the server now gives that
/// device fewer). A certificate the owner key did not sign, for another key
/// than the one vouched for under that id, or long ended (a device nobody
/// kept up; pairing it again brings it back) is not renewed. The names of
/// the devices renewed.
pub fn renew_due(client: &Client, key: &Key) -> Result<Vec<String>> {
    let vouched = certified()?;
    if vouched.is_empty() {
        return Ok(Vec::new());
    }
    let owner = key.fingerprint();
    let now = now_ms() as i64;
    let listed: Devices = client.get("/v1/devices")?;
    let mut renewed = Vec::new();
    for device in listed.devices {
        let Some(fp) = vouched.get(&device.device_id) else {
            continue;
        };
        let Some(cert) = device
            .certificate
            .clone()
            .and_then(|c| serde_json::from_value::<Envelope>(c).ok())
            .and_then(|e| owner_signed::<Certificate>(&owner, &e).ok())
        else {
            continue;
        };
        let same_key = B64.decode(&cert.key).is_ok_and(|k| &fingerprint(&k) == fp);
        if cert.owner != owner
            || cert.device_id != device.device_id
            || !same_key
            || cert.expires_at - now > RENEW_WITHIN_MS
            || !still_vouched(cert.expires_at, now)
        {
            continue;
        }
        let anew = Certificate {
            rights: cert.rights.and(&device.rights),
            expires_at: now + CERTIFICATE_LIFETIME_MS,
            ..cert
        };
        let _: Value = client.put(
            &format!("/v1/devices/{}/certificate", path_part(&device.device_id)?),
            &json!({ "certificate": key.sign_json(&anew) }),
        )?;
        renewed.push(device.name);
    }
    Ok(renewed)
}

/// Signs and publishes the owner's device list as `change` makes it from
/// the newest one the owner's key signed (a list the server holds that the
/// key did not sign is not built on), with a version above it.
pub fn change_list(
    client: &Client,
    key: &Key,
    change: impl FnOnce(&mut Vec<String>),
) -> Result<()> {
    #[derive(serde::Deserialize)]
    struct Held {
        list: Option<Envelope>,
    }
    let owner = key.fingerprint();
    let held: Held = client.get("/v1/owners/me/device-list")?;
    let signed = |e: Envelope| {
        owner_signed::<DeviceList>(&owner, &e)
            .ok()
            .filter(|l| l.owner == owner)
    };
    // The newer of the server's and the one kept here: a server that hands
    // back a list from before a revocation does not get it signed anew.
    let kept = login::read_private(&kept_list_path(), "it is the owner's device list")
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_str::<Envelope>(&t).ok())
        .and_then(signed);
    let current = match (held.list.and_then(signed), kept) {
        (Some(h), Some(k)) => Some(if h.version > k.version { h } else { k }),
        (h, k) => h.or(k),
    };
    let mut devices = current
        .as_ref()
        .map(|l| l.devices.clone())
        .unwrap_or_default();
    change(&mut devices);
    let version = (now_ms() as u64).max(current.map_or(0, |l| l.version + 1));
    let list = DeviceList {
        v: VERSION,
        owner,
        version,
        devices,
        expires_at: now_ms() as i64 + DEVICE_LIST_LIFETIME_MS,
    };
    let envelope = key.sign_json(&list);
    let _: Value = client.put("/v1/owners/me/device-list", &json!({ "list": envelope }))?;
    write_private(
        &kept_list_path(),
        serde_json::to_string(&envelope).unwrap_or_default(),
    )
    .map_err(|e| Fail::new(exit::REFUSED, format!("cannot keep the device list: {e}")))?;
    Ok(())
}

/// Which key this machine vouched for, by device id, beside the owner key:
/// a revocation strikes the key it certified, whatever the server says that
/// device's key is. One id names one key and one key one id, for good
/// ([`id_clash`]): the server's ids are only handles on keys this machine saw
/// proved.
fn certified_path() -> std::path::PathBuf {
    login::dir().join("certified.json")
}

/// The owner's record of the keys it vouched for, by device id: empty when
/// there is none yet, refused when it cannot be read. Read as empty, it
/// would let a pairing file a key under an id that names another, and the
/// next write would forget every device in it.
fn certified() -> Result<std::collections::BTreeMap<String, String>> {
    let path = certified_path();
    let Some(text) = login::read_private(&path, "it is the owner's record of its devices")? else {
        return Ok(Default::default());
    };
    serde_json::from_str(&text).map_err(|_| {
        Fail::new(
            exit::LOGIN,
            format!(
                "{} is not a needs-you record of devices: nothing is vouched for or struck until it is put back",
                path.display()
            ),
        )
    })
}

/// Whether a certificate that ended at `expires_at` still counts for the
/// device's sake at `now`: in date, or ended so lately that
/// [`renew_due`] signs it anew; such a device gets each new version of the
/// content key. One long ended is of a device nobody uses.
fn still_vouched(expires_at: i64, now: i64) -> bool {
    now - expires_at <= RENEW_WITHIN_MS
}

/// Why filing `fingerprint` under `device_id` would break the record's rule
/// (one id, one key), if it would: the id already names another key, or the
/// key stands under another id.
fn id_clash(
    record: &std::collections::BTreeMap<String, String>,
    device_id: &str,
    fingerprint: &str,
) -> Option<String> {
    if let Some(had) = record.get(device_id).filter(|had| *had != fingerprint) {
        return Some(format!(
            "{device_id}, the id of a device you paired before (key {}…)",
            &had[..had.len().min(11)]
        ));
    }
    record
        .iter()
        .find(|(id, fp)| *fp == fingerprint && *id != device_id)
        .map(|(id, _)| format!("{device_id}, with the key of {id}, which you paired before"))
}

/// Every key this machine vouched for, by device id.
pub fn vouched_keys() -> Result<std::collections::BTreeMap<String, String>> {
    certified()
}

fn remember(device_id: &str, fingerprint: &str) -> Result<()> {
    let mut all = certified()?;
    all.insert(device_id.to_owned(), fingerprint.to_owned());
    write_private(
        &certified_path(),
        serde_json::to_string_pretty(&all).unwrap_or_default(),
    )
    .map_err(|e| Fail::new(exit::REFUSED, format!("cannot keep the device's key: {e}")))
}

/// A live device this machine vouched for, as the owner key certified it:
/// its id, the seal key its certificate names, and that certificate.
pub struct Vouched {
    pub device_id: String,
    pub seal_key: String,
    pub certificate: Certificate,
}

/// The live devices this machine vouched for whose certificate the owner
/// key signed, for the key vouched for, naming a seal key, and still
/// vouched for (`still_vouched`): those a new version of the content key
/// is wrapped to. The server's word on a device's keys counts for nothing
/// here.
pub fn vouched(client: &Client, key: &Key) -> Result<Vec<Vouched>> {
    let vouched = certified()?;
    let owner = key.fingerprint();
    let now = now_ms() as i64;
    let listed: Devices = client.get("/v1/devices")?;
    Ok(listed
        .devices
        .into_iter()
        .filter_map(|device| {
            let fp = vouched.get(&device.device_id)?;
            let envelope = serde_json::from_value::<Envelope>(device.certificate?).ok()?;
            let cert = owner_signed::<Certificate>(&owner, &envelope).ok()?;
            let same_key = B64.decode(&cert.key).is_ok_and(|k| &fingerprint(&k) == fp);
            let counts = cert.owner == owner
                && cert.device_id == device.device_id
                && same_key
                && still_vouched(cert.expires_at, now);
            counts.then_some(Vouched {
                device_id: device.device_id,
                seal_key: cert.seal_key.clone()?,
                certificate: cert,
            })
        })
        .collect())
}

/// Strikes the key this machine vouched for under `device` from the owner's
/// device list, and forgets it: the key struck, if it had vouched for one.
pub fn strike(client: &Client, key: &Key, device: &str) -> Result<Option<String>> {
    let mut all = certified()?;
    let Some(struck) = all.remove(device) else {
        return Ok(None);
    };
    let keys = [struck.clone()];
    change_list(client, key, |listed| listed.retain(|fp| !keys.contains(fp)))?;
    write_private(
        &certified_path(),
        serde_json::to_string_pretty(&all).unwrap_or_default(),
    )
    .map_err(|e| Fail::new(exit::REFUSED, format!("cannot keep the devices' keys: {e}")))?;
    Ok(Some(struck))
}

/// The owner's device list as this machine last signed it, beside the key.
fn kept_list_path() -> std::path::PathBuf {
    login::dir().join("device-list.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_names_one_key_and_a_key_one_id() {
        let record: std::collections::BTreeMap<String, String> =
            [("dev_p".to_owned(), "FP-of-the-phone-P".to_owned())].into();
        // The server names a new device N with P's id: refused.
        assert!(id_clash(&record, "dev_p", "FP-of-the-new-N")
            .is_some_and(|why| why.contains("dev_p, the id of a device you paired before")));
        // Or P's key under a new id: refused too.
        assert!(id_clash(&record, "dev_n", "FP-of-the-phone-P")
            .is_some_and(|why| why.contains("with the key of dev_p")));
        // A new id for a new key, or the same pair again: filed.
        assert_eq!(id_clash(&record, "dev_n", "FP-of-the-new-N"), None);
        assert_eq!(id_clash(&record, "dev_p", "FP-of-the-phone-P"), None);
    }
}
