//! Who is calling: the admin (the `ADMIN_TOKEN` secret), an owner (`nyo_…`), a
//! device the owner paired (`nyd_…`) or a task (`nyt_…`). Each route asks for
//! the kind it serves (a [`Person`] is an owner or one of their devices); any
//! other credential is refused as if it were wrong.

use needs_you_core::api::{Right, Rights};
use worker::{Env, Request};

use crate::ids::{sha256_hex, DEVICE_PREFIX, OWNER_PREFIX, TASK_PREFIX};
use crate::json::ApiError;
use crate::store;

pub struct Owner {
    pub id: String,
    /// The hash of the token the request came with.
    pub token_hash: String,
}

/// A person: an owner with their own token, or a device they paired, which
/// acts for them on the page's routes, within the rights it was paired with.
pub struct Person {
    pub owner_id: String,
    /// The device, when a device is calling.
    pub device_id: Option<String>,
    /// What it may do beyond reading the list: everything for the owner.
    pub rights: Rights,
    /// The hash of the credential it came with: the key of its rates.
    pub credential_hash: String,
}

impl Person {
    /// Refuses what this device was not paired to do (403: the credential is
    /// good, the deed is not its).
    pub fn may(&self, right: Right) -> Result<(), ApiError> {
        if self.rights.has(right) {
            return Ok(());
        }
        let what = match right {
            Right::Tasks => "start or stop tasks",
            Right::Answer => "answer, approve or dismiss questions",
            Right::Pair => "pair other devices",
            Right::Screen => "see the agents' terminals",
        };
        Err(ApiError::new(
            403,
            "not_permitted",
            format!(
                "this device may not {what}: it was paired without that right (pair it again with it)"
            ),
        ))
    }
}

pub struct Task {
    pub id: String,
    pub name: String,
}

fn bearer(req: &Request) -> Result<String, ApiError> {
    let header = req
        .headers()
        .get("authorization")
        .ok()
        .flatten()
        .ok_or_else(|| {
            ApiError::unauthorized("missing credential: send `Authorization: Bearer <token>`")
        })?;
    match header.split_once(' ') {
        Some((scheme, token))
            if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
        {
            Ok(token.trim().to_owned())
        }
        _ => Err(ApiError::unauthorized(
            "the Authorization header must be `Bearer <token>`",
        )),
    }
}

/// The admin: only the `ADMIN_TOKEN` secret. Compared by hash, in constant time.
pub fn admin(req: &Request, env: &Env) -> Result<(), ApiError> {
    let token = bearer(req)?;
    let secret = env
        .secret("ADMIN_TOKEN")
        .map_err(|_| ApiError::unauthorized("this server has no ADMIN_TOKEN secret set"))?
        .to_string();
    if secret.is_empty() || !same_hash(&token, &secret) {
        return Err(ApiError::unauthorized("this route needs the admin token"));
    }
    Ok(())
}

pub async fn owner(req: &Request, env: &Env) -> Result<Owner, ApiError> {
    let token = bearer(req)?;
    if !token.starts_with(OWNER_PREFIX) {
        return Err(ApiError::unauthorized(
            "this route needs an owner token (nyo_…)",
        ));
    }
    let token_hash = sha256_hex(token.as_bytes());
    let id = store::owner_by_token_hash(env, &token_hash)
        .await?
        .ok_or_else(|| ApiError::unauthorized("unknown owner token"))?;
    Ok(Owner { id, token_hash })
}

/// An owner or a live device of theirs. A revoked device is refused at once.
pub async fn person(req: &Request, env: &Env) -> Result<Person, ApiError> {
    let token = bearer(req)?;
    let hash = sha256_hex(token.as_bytes());
    if token.starts_with(OWNER_PREFIX) {
        let owner_id = store::owner_by_token_hash(env, &hash)
            .await?
            .ok_or_else(|| ApiError::unauthorized("unknown owner token"))?;
        return Ok(Person {
            owner_id,
            device_id: None,
            rights: Rights::all(),
            credential_hash: hash,
        });
    }
    if token.starts_with(DEVICE_PREFIX) {
        let device = store::device_by_token_hash(env, &hash)
            .await?
            .ok_or_else(|| ApiError::unauthorized("unknown or revoked device credential"))?;
        return Ok(Person {
            owner_id: device.owner_id,
            device_id: Some(device.id),
            rights: Rights::from_bits(device.rights),
            credential_hash: hash,
        });
    }
    Err(ApiError::unauthorized(
        "this route needs an owner token (nyo_…) or a device credential (nyd_…)",
    ))
}

/// The SHA-256 of the request's task credential, after checking its form only.
/// `POST /v1/reports` checks the task itself inside its D1 batch, with [`live`].
pub fn task_credential_hash(req: &Request) -> Result<String, ApiError> {
    let token = bearer(req)?;
    if !token.starts_with(TASK_PREFIX) {
        return Err(ApiError::unauthorized(
            "this route needs a task credential (nyt_…)",
        ));
    }
    Ok(sha256_hex(token.as_bytes()))
}

/// Refuses a task that is unknown (`None`), or revoked or expired at `now`;
/// `found` is its `(revoked_at, expires_at)`.
pub fn live(found: Option<(Option<i64>, Option<i64>)>, now: f64) -> Result<(), ApiError> {
    let (revoked_at, expires_at) =
        found.ok_or_else(|| ApiError::unauthorized("unknown task credential"))?;
    if revoked_at.is_some() {
        return Err(ApiError::unauthorized("this task credential was revoked"));
    }
    if expires_at.is_some_and(|t| t as f64 <= now) {
        return Err(ApiError::unauthorized("this task credential has expired"));
    }
    Ok(())
}

pub async fn task(req: &Request, env: &Env, now: f64) -> Result<Task, ApiError> {
    let hash = task_credential_hash(req)?;
    let row = store::task_by_credential_hash(env, &hash).await?;
    live(row.as_ref().map(|r| (r.revoked_at, r.expires_at)), now)?;
    let row = row.ok_or_else(|| ApiError::unauthorized("unknown task credential"))?;
    Ok(Task {
        id: row.id,
        name: row.name,
    })
}

fn same_hash(a: &str, b: &str) -> bool {
    let (a, b) = (sha256_hex(a.as_bytes()), sha256_hex(b.as_bytes()));
    a.bytes()
        .zip(b.bytes())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}
