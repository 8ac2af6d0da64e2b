//! Whose signature a statement carries, and whether it counts: the checks
//! of an envelope ([`needs_you_core::signed`]) against the owner key a
//! machine pinned, for every answer and every taking back of a rule alike.
//!
//! A machine knows its owner by the fingerprint of the owner's public key
//! ([`fingerprint`]). What [`verify_as`] checks, in order, each with its
//! [`Refusal`]: a statement came (`Unsigned`); its signer is the pinned key,
//! or a device whose certificate that key signed (`UnknownDevice`), still
//! in date (`Expired`), with the right to answer (`UnknownDevice`), and
//! named in the owner's newest device list the machine has seen
//! (`RevokedDevice`) while that list is in its life (`StaleDeviceList`);
//! the signature holds over the statement's bytes, which read as a
//! statement of this owner (`BadSignature`); it is fresh (`Expired`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;
use needs_you_core::afar::Refusal;
use needs_you_core::api::Right;
use needs_you_core::signed::{Certificate, DeviceList, Envelope, Signed, VERSION};
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use serde::de::DeserializeOwned;
use sha2::{Digest as _, Sha256};

/// The fingerprint of a public key (SEC1 bytes): the SHA-256 of those
/// bytes, base64url. What a person pastes to pin the owner on a machine.
pub fn fingerprint(key_sec1: &[u8]) -> String {
    B64.encode(Sha256::digest(key_sec1))
}

/// The bytes `envelope` signs, if its signature by its own key holds.
fn signed_bytes(envelope: &Envelope) -> Result<Vec<u8>, Refusal> {
    let key_bytes = B64
        .decode(&envelope.key)
        .map_err(|_| Refusal::BadSignature)?;
    let key = VerifyingKey::from_sec1_bytes(&key_bytes).map_err(|_| Refusal::BadSignature)?;
    let bytes = B64
        .decode(&envelope.statement)
        .map_err(|_| Refusal::BadSignature)?;
    let signature = B64
        .decode(&envelope.signature)
        .ok()
        .and_then(|s| Signature::from_slice(&s).ok())
        .ok_or(Refusal::BadSignature)?;
    key.verify(&bytes, &signature)
        .map_err(|_| Refusal::BadSignature)?;
    Ok(bytes)
}

/// What `envelope` says, if the `owner`'s own key signed it.
pub fn owner_signed<T: DeserializeOwned>(owner: &str, envelope: &Envelope) -> Result<T, Refusal> {
    let key = B64
        .decode(&envelope.key)
        .map_err(|_| Refusal::BadSignature)?;
    if fingerprint(&key) != owner {
        return Err(Refusal::UnknownDevice);
    }
    let bytes = signed_bytes(envelope)?;
    serde_json::from_slice(&bytes).map_err(|_| Refusal::BadSignature)
}

/// The newer of the device list this machine `kept` and the one the server
/// `offered`, if that one is the owner's own and newer: a list the owner's
/// key did not sign is ignored, as is an older one (a server may hold back
/// the newest, never undo it here).
pub fn newest_list(
    owner: &str,
    kept: Option<DeviceList>,
    offered: Option<&Envelope>,
) -> Option<DeviceList> {
    let offered = offered
        .and_then(|e| owner_signed::<DeviceList>(owner, e).ok())
        .filter(|l| l.v == VERSION && l.owner == owner);
    match (kept, offered) {
        (Some(k), Some(o)) if o.version > k.version => Some(o),
        (Some(k), _) => Some(k),
        (None, o) => o,
    }
}

/// Whether `envelope`'s signer may answer for `owner`: the owner's own key,
/// or a device whose certificate that key signed, in date at `now`, with
/// the right to answer, and named in the newest `devices` list.
fn may_answer(
    owner: &str,
    envelope: &Envelope,
    devices: Option<&DeviceList>,
    now: i64,
) -> Result<(), Refusal> {
    let key = B64
        .decode(&envelope.key)
        .map_err(|_| Refusal::BadSignature)?;
    if fingerprint(&key) == owner {
        return Ok(());
    }
    let certificate = envelope
        .certificate
        .as_deref()
        .ok_or(Refusal::UnknownDevice)?;
    let cert: Certificate = owner_signed(owner, certificate)?;
    if cert.v != VERSION || cert.owner != owner || cert.key != envelope.key {
        return Err(Refusal::UnknownDevice);
    }
    if now > cert.expires_at {
        return Err(Refusal::Expired);
    }
    if !cert.rights.has(Right::Answer) {
        return Err(Refusal::UnknownDevice);
    }
    // The list names keys, not the server's device ids: an id the server
    // hands a new device again never brings back a revoked key. A list past
    // its life may be one a server kept showing after a newer one left the
    // device out: it vouches for nobody.
    match devices {
        Some(list) if list.devices.contains(&fingerprint(&key)) => match now > list.expires_at {
            true => Err(Refusal::StaleDeviceList),
            false => Ok(()),
        },
        _ => Err(Refusal::RevokedDevice),
    }
}

/// The statement of `envelope` (an answer's [`Statement`](needs_you_core::signed::Statement), or a rule's
/// [`Revoking`](needs_you_core::signed::Revoking)), if its signer may
/// answer for the pinned `owner` (the owner's key, or a device of the
/// newest `devices` list), its signature holds, and it is fresh at `now`
/// (ms).
pub fn verify_as<T: Signed + DeserializeOwned>(
    owner: &str,
    envelope: Option<&Envelope>,
    devices: Option<&DeviceList>,
    now: i64,
) -> Result<T, Refusal> {
    let envelope = envelope.ok_or(Refusal::Unsigned)?;
    may_answer(owner, envelope, devices, now)?;
    let bytes = signed_bytes(envelope)?;
    let statement: T = serde_json::from_slice(&bytes).map_err(|_| Refusal::BadSignature)?;
    if !T::VERSIONS.contains(&statement.version()) || statement.owner() != owner {
        return Err(Refusal::BadSignature);
    }
    if !statement.fresh(now) {
        return Err(Refusal::Expired);
    }
    Ok(statement)
}

#[cfg(test)]
mod tests {
    use needs_you_core::afar::{AnswerBody, Verdict};
    use needs_you_core::signed::{self, LIFETIME_MS};

    use super::*;
    use crate::testing::*;
    use needs_you_core::signed::Statement;

    /// An answer's statement, as [`verify_as`] checks it.
    fn verify(
        owner: &str,
        envelope: Option<&Envelope>,
        devices: Option<&DeviceList>,
        now: i64,
    ) -> Result<Statement, Refusal> {
        verify_as(owner, envelope, devices, now)
    }

    #[test]
    fn the_owners_signed_statement_is_taken_and_anything_else_is_refused_with_its_code() {
        let owner = key(1);
        let fp = fingerprint(&public(&owner));
        let good = statement(&fp, allow(), Some("d1"));
        assert_eq!(
            verify(&fp, Some(&seal(&owner, &good)), None, NOW),
            Ok(good.clone())
        );

        assert_eq!(code(verify(&fp, None, None, NOW)), "bad_signature");
        assert_eq!(verify(&fp, None, None, NOW), Err(Refusal::Unsigned));
        // Another key, even over the owner's fingerprint in the statement.
        let other = key(2);
        assert_eq!(
            code(verify(&fp, Some(&seal(&other, &good)), None, NOW)),
            "unknown_device"
        );
        // The owner's key, the signature of another statement.
        let mut swapped = seal(&owner, &good);
        let deny = statement(
            &fp,
            AnswerBody::Decision {
                decision: Verdict::Deny,
                message: None,
            },
            Some("d1"),
        );
        swapped.statement = seal(&owner, &deny).statement;
        assert_eq!(
            code(verify(&fp, Some(&swapped), None, NOW)),
            "bad_signature"
        );
        // A garbled signature, or none.
        let mut garbled = seal(&owner, &good);
        garbled.signature = B64.encode([7u8; 64]);
        assert_eq!(
            code(verify(&fp, Some(&garbled), None, NOW)),
            "bad_signature"
        );
        let mut none = seal(&owner, &good);
        none.signature = String::new();
        assert_eq!(code(verify(&fp, Some(&none), None, NOW)), "bad_signature");
        // Signed by the owner's key, under another owner's name.
        let elsewhere = statement("someone-else", allow(), Some("d1"));
        assert_eq!(
            code(verify(&fp, Some(&seal(&owner, &elsewhere)), None, NOW)),
            "bad_signature"
        );
        // Stale, or claiming too long a life.
        assert_eq!(
            code(verify(
                &fp,
                Some(&seal(&owner, &good)),
                None,
                NOW + LIFETIME_MS + 1
            )),
            "expired"
        );
        let mut eternal = good.clone();
        eternal.expires_at = NOW + 24 * 3600 * 1000;
        assert_eq!(
            code(verify(&fp, Some(&seal(&owner, &eternal)), None, NOW)),
            "expired"
        );
    }

    #[test]
    fn a_rule_is_taken_back_only_by_a_signed_revoking_and_no_answer_reads_as_one() {
        use needs_you_core::signed::Revoking;
        let owner = key(1);
        let fp = fingerprint(&public(&owner));
        let revoking = Revoking {
            v: VERSION,
            owner: fp.clone(),
            id: "rv-random-id".into(),
            rule_id: "rul_1".into(),
            answer_id: "ans_1".into(),
            expires_at: NOW + LIFETIME_MS,
        };
        let signed = signed_by(&owner, &revoking);
        assert_eq!(
            verify_as::<Revoking>(&fp, Some(&signed), None, NOW),
            Ok(revoking.clone())
        );
        assert_eq!(
            code(verify_as::<Revoking>(&fp, None, None, NOW)),
            "bad_signature"
        );
        assert_eq!(
            code(verify_as::<Revoking>(
                &fp,
                Some(&signed_by(&key(2), &revoking)),
                None,
                NOW
            )),
            "unknown_device"
        );
        assert_eq!(
            code(verify_as::<Revoking>(
                &fp,
                Some(&signed),
                None,
                NOW + 2 * LIFETIME_MS
            )),
            "expired"
        );
        // An allow the owner signed is no taking back, nor the reverse.
        let allowed = seal(&owner, &statement(&fp, allow(), Some("d1")));
        assert_eq!(
            code(verify_as::<Revoking>(&fp, Some(&allowed), None, NOW)),
            "bad_signature"
        );
        assert_eq!(code(verify(&fp, Some(&signed), None, NOW)), "bad_signature");
    }

    #[test]
    fn a_device_answers_with_the_owners_certificate_while_the_newest_list_names_it() {
        let owner = key(1);
        let phone = key(3);
        let fp = fingerprint(&public(&owner));
        let good = statement(&fp, allow(), Some("d1"));
        let by_phone = |cert: Envelope| Envelope {
            certificate: Some(Box::new(cert)),
            ..seal(&phone, &good)
        };
        let listed = newest_list(&fp, None, Some(&list(&owner, 1, &[&phone])));
        let later = NOW + LIFETIME_MS;
        let cert = certificate(&owner, &phone, "answer", later);
        assert_eq!(
            verify(&fp, Some(&by_phone(cert.clone())), listed.as_ref(), NOW),
            Ok(good.clone())
        );

        // No certificate, or one another key signed, or one for another key.
        assert_eq!(
            code(verify(
                &fp,
                Some(&seal(&phone, &good)),
                listed.as_ref(),
                NOW
            )),
            "unknown_device"
        );
        let self_made = certificate(&phone, &phone, "answer", later);
        assert_eq!(
            code(verify(
                &fp,
                Some(&by_phone(self_made)),
                listed.as_ref(),
                NOW
            )),
            "unknown_device"
        );
        let someone_elses = certificate(&owner, &key(4), "answer", later);
        assert_eq!(
            code(verify(
                &fp,
                Some(&by_phone(someone_elses)),
                listed.as_ref(),
                NOW
            )),
            "unknown_device"
        );
        // Without the right to answer, or out of date.
        let reader = certificate(&owner, &phone, "screen", later);
        assert_eq!(
            code(verify(&fp, Some(&by_phone(reader)), listed.as_ref(), NOW)),
            "unknown_device"
        );
        let old = certificate(&owner, &phone, "answer", NOW - 1);
        assert_eq!(
            code(verify(&fp, Some(&by_phone(old)), listed.as_ref(), NOW)),
            "expired"
        );
        // A certificate whose signature was changed.
        let mut forged = cert.clone();
        forged.signature = seal(&owner, &good).signature;
        assert_eq!(
            code(verify(&fp, Some(&by_phone(forged)), listed.as_ref(), NOW)),
            "bad_signature"
        );
        // No list seen, or the newest leaves it out: revoked.
        assert_eq!(
            code(verify(&fp, Some(&by_phone(cert.clone())), None, NOW)),
            "revoked_device"
        );
        let revoked = newest_list(&fp, listed.clone(), Some(&list(&owner, 2, &[&key(6)])));
        assert_eq!(
            code(verify(
                &fp,
                Some(&by_phone(cert.clone())),
                revoked.as_ref(),
                NOW
            )),
            "revoked_device"
        );
        // A server cannot undo the revocation with the older list, nor make one.
        let kept = newest_list(&fp, revoked.clone(), Some(&list(&owner, 1, &[&phone])));
        assert_eq!(kept, revoked);
        let made_up = newest_list(&fp, revoked.clone(), Some(&list(&key(5), 9, &[&phone])));
        assert_eq!(made_up, revoked);
    }

    /// A server that keeps the list that revoked the phone from a machine
    /// gets the phone's answers taken there only while the list it shows
    /// still counts: past its life it vouches for nobody, and the owner's
    /// own key still answers.
    #[test]
    fn a_withheld_revocation_holds_once_the_list_shown_ends() {
        let owner = key(1);
        let phone = key(3);
        let fp = fingerprint(&public(&owner));
        let good = statement(&fp, allow(), Some("d1"));
        let cert = certificate(
            &owner,
            &phone,
            "answer",
            NOW + 2 * signed::DEVICE_LIST_LIFETIME_MS,
        );
        let by_phone = Envelope {
            certificate: Some(Box::new(cert)),
            ..seal(&phone, &good)
        };
        let shown = newest_list(&fp, None, Some(&list_until(&owner, 1, &[&phone], NOW)));
        assert_eq!(
            verify(&fp, Some(&by_phone), shown.as_ref(), NOW),
            Ok(good.clone())
        );
        assert_eq!(
            code(verify(&fp, Some(&by_phone), shown.as_ref(), NOW + 1)),
            "stale_device_list"
        );
        let by_owner = seal(&owner, &good);
        assert_eq!(
            verify(&fp, Some(&by_owner), shown.as_ref(), NOW + 1),
            Ok(good)
        );
    }
}
