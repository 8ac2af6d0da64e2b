//! Owners and tasks: creation, credential look-ups, listing and revocation.

use serde::Deserialize;
use serde_json::Value;
use worker::{Env, Result};

use needs_you_core::{api, CloseReason};

use super::questions;
use super::sql::{changes, db, n, s, stmt};
use crate::limits;
use crate::question::ClosedQuestion;

/// Binds ?1 id, ?2 name, ?3 the token's hash, ?4 now.
const CREATE_OWNER: &str =
    "INSERT INTO owners (id, name, token_hash, created_at) VALUES (?1, ?2, ?3, ?4)";

pub async fn create_owner(
    env: &Env,
    id: &str,
    name: &str,
    token_hash: &str,
    now: f64,
) -> Result<()> {
    let db = db(env)?;
    stmt(&db, CREATE_OWNER, &[s(id), s(name), s(token_hash), n(now)])?
        .run()
        .await?;
    Ok(())
}

/// Replaces an owner's token, only if it is still the one the request came
/// with: of two rotations at once, one wins. Binds ?1 the owner id, ?2 the
/// old token's hash, ?3 the new one's.
const ROTATE_OWNER_TOKEN: &str =
    "UPDATE owners SET token_hash = ?3 WHERE id = ?1 AND token_hash = ?2";

/// Fails the answers the owner's old token sent (no device) that the
/// agent's machine has not taken yet, only once the rotation held. Binds
/// ?1 the owner id, ?3 the new token's hash, ?4 now.
const FAIL_ANSWERS_OF_OLD_TOKEN: &str = "
UPDATE answers SET state = 'failed', reason = 'the owner token that sent it was replaced',
       reason_code = 'rotated', updated_at = ?4
WHERE owner_id = ?1 AND device_id IS NULL AND state IN ('queued', 'delivered')
  AND EXISTS (SELECT 1 FROM owners WHERE id = ?1 AND token_hash = ?3)";

/// Whether the token was replaced (false: another rotation came first). The
/// old token's answers not yet taken fail with it.
pub async fn rotate_owner_token(
    env: &Env,
    id: &str,
    old_hash: &str,
    new_hash: &str,
    now: f64,
) -> Result<bool> {
    let db = db(env)?;
    let args = [s(id), s(old_hash), s(new_hash), n(now)];
    let results = db
        .batch(vec![
            stmt(&db, ROTATE_OWNER_TOKEN, &args[..3])?,
            stmt(&db, FAIL_ANSWERS_OF_OLD_TOKEN, &args)?,
            stmt(&db, super::revision::BUMP_REVISION, &[s(id)])?,
        ])
        .await?;
    Ok(changes(&results[0])? > 0)
}

/// Binds ?1 the token's hash.
const OWNER_BY_TOKEN_HASH: &str = "SELECT id FROM owners WHERE token_hash = ?1";

pub async fn owner_by_token_hash(env: &Env, hash: &str) -> Result<Option<String>> {
    let db = db(env)?;
    stmt(&db, OWNER_BY_TOKEN_HASH, &[s(hash)])?
        .first::<String>(Some("id"))
        .await
}

/// Binds ?1 the task id.
const OWNER_OF_TASK: &str = "SELECT owner_id FROM tasks WHERE id = ?1";

/// Whose task `task_id` is: the relay's object knows only the task.
pub async fn owner_of_task(env: &Env, task_id: &str) -> Result<Option<String>> {
    let db = db(env)?;
    stmt(&db, OWNER_OF_TASK, &[s(task_id)])?
        .first::<String>(Some("owner_id"))
        .await
}

#[derive(Deserialize)]
pub struct TaskAuthRow {
    pub id: String,
    pub name: String,
    pub expires_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

/// Binds ?1 the credential's hash.
const TASK_BY_CREDENTIAL_HASH: &str =
    "SELECT id, name, expires_at, revoked_at FROM tasks WHERE credential_hash = ?1";

pub async fn task_by_credential_hash(env: &Env, hash: &str) -> Result<Option<TaskAuthRow>> {
    let db = db(env)?;
    stmt(&db, TASK_BY_CREDENTIAL_HASH, &[s(hash)])?
        .first(None)
        .await
}

pub struct TaskRow<'a> {
    pub id: &'a str,
    pub owner_id: &'a str,
    pub name: &'a str,
    pub credential_hash: &'a str,
    pub expires_at: f64,
    /// The device that asked, revoked with it; none for the owner's token.
    pub created_by: Option<&'a str>,
    /// Whether its panes may be shown (Show terminal).
    pub screen: bool,
}

/// The task, while its owner has fewer than ?8 live tasks. Binds ?1 id, ?2
/// owner id, ?3 name, ?4 the credential's hash, ?5 now, ?6 when it expires,
/// ?7 the device that made it (or null), ?8 the limit, ?9 whether its panes
/// may be shown (1 or 0).
const CREATE_TASK: &str = "
INSERT INTO tasks (id, owner_id, name, credential_hash, created_at, expires_at, created_by, screen)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?9
WHERE (SELECT COUNT(*) FROM tasks WHERE owner_id = ?2 AND revoked_at IS NULL
       AND (expires_at IS NULL OR expires_at > ?5)) < ?8
RETURNING id";

/// [`super::revision::BUMP_REVISION`] once task ?2 exists. Binds ?1 the
/// owner id, ?2 the task id.
const BUMP_REVISION_IF_TASK: &str = "
UPDATE owners SET revision = revision + 1
WHERE id = ?1 AND EXISTS (SELECT 1 FROM tasks WHERE id = ?2)";

/// Whether the task was made (false: the owner has [`limits::TASKS_PER_OWNER`]).
pub async fn create_task(env: &Env, t: &TaskRow<'_>, now: f64) -> Result<bool> {
    let db = db(env)?;
    let args = [
        s(t.id),
        s(t.owner_id),
        s(t.name),
        s(t.credential_hash),
        n(now),
        n(t.expires_at),
        t.created_by.map_or(wasm_bindgen::JsValue::NULL, s),
        n(f64::from(limits::TASKS_PER_OWNER)),
        n(if t.screen { 1.0 } else { 0.0 }),
    ];
    let results = db
        .batch(vec![
            stmt(&db, CREATE_TASK, &args)?,
            stmt(&db, BUMP_REVISION_IF_TASK, &[s(t.owner_id), s(t.id)])?,
        ])
        .await?;
    Ok(!results[0].results::<Value>()?.is_empty())
}

/// The owner's live tasks (neither revoked nor expired), newest first.
/// Binds ?1 the owner id, ?2 now.
pub(super) const LIST_TASKS: &str = "
SELECT t.id AS task_id, t.name, t.sealed_name, t.created_at, t.expires_at, t.last_report_at, t.muted_until,
       (SELECT cli FROM sessions WHERE task_id = t.id ORDER BY updated_at DESC LIMIT 1) AS cli,
       CASE WHEN EXISTS (SELECT 1 FROM questions q WHERE q.task_id = t.id AND q.closed_at IS NULL)
            THEN 'waiting' ELSE 'running' END AS state
FROM tasks t
WHERE t.owner_id = ?1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2)
ORDER BY t.created_at DESC";

pub async fn list_tasks(env: &Env, owner_id: &str, now: f64) -> Result<Vec<api::Task>> {
    let db = db(env)?;
    let tasks: Vec<api::Task> = stmt(&db, LIST_TASKS, &[s(owner_id), n(now)])?
        .all()
        .await?
        .results()?;
    Ok(tasks.into_iter().map(named).collect())
}

/// A task with its agent's name, as every list shows it.
pub(super) fn named(mut t: api::Task) -> api::Task {
    t.agent = t.cli.map(|c| c.display_name().to_owned());
    t
}

/// Revokes the task if it is the owner's. Binds ?1 the task id, ?2 the owner id, ?3 now.
const REVOKE_TASK: &str =
    "UPDATE tasks SET revoked_at = ?3 WHERE id = ?1 AND owner_id = ?2 AND revoked_at IS NULL";

/// Mutes a live task of the owner until ?3 (null: unmuted). Binds ?1 the
/// task id, ?2 the owner id, ?3 until when, ?4 now.
const MUTE_TASK: &str = "
UPDATE tasks SET muted_until = ?3
WHERE id = ?1 AND owner_id = ?2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?4)";

/// Names the owner's live task ?1 with its sealed name ?3, once: only a
/// task made to be named so (`name_sealed`: no name in the clear) and not
/// named yet, which the command line that made it does at once; no device
/// renames a task after. Binds ?2 the owner id, ?4 now.
const NAME_TASK: &str = "
UPDATE tasks SET sealed_name = ?3
WHERE id = ?1 AND owner_id = ?2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?4)
  AND name = '' AND sealed_name IS NULL";

/// Whether the owner's live task was named ([`NAME_TASK`]).
pub async fn name_task(
    env: &Env,
    owner_id: &str,
    task_id: &str,
    sealed: &str,
    now: f64,
) -> Result<bool> {
    let db = db(env)?;
    let results = db
        .batch(vec![
            stmt(
                &db,
                NAME_TASK,
                &[s(task_id), s(owner_id), s(sealed), n(now)],
            )?,
            stmt(&db, super::revision::BUMP_REVISION, &[s(owner_id)])?,
        ])
        .await?;
    Ok(changes(&results[0])? > 0)
}

/// The open dialogs and permissions of the owner's task ?1 (?2 the owner id),
/// from the partial index of open questions.
const OPEN_RINGING_OF_TASK: &str = "
SELECT q.id FROM questions q
WHERE q.task_id = ?1 AND q.owner_id = ?2 AND q.closed_at IS NULL AND q.kind IN ('dialog', 'permission')";

/// Mutes the owner's live task until `until` (or unmutes it): `None` when it
/// is no live task of theirs, else the ids of its open dialogs and
/// permissions, whose alarms may now ring sooner. The list shows the mute:
/// its revision moves.
pub async fn mute_task(
    env: &Env,
    owner_id: &str,
    task_id: &str,
    until: Option<f64>,
    now: f64,
) -> Result<Option<Vec<String>>> {
    let db = db(env)?;
    let until = until.map_or(wasm_bindgen::JsValue::NULL, n);
    let results = db
        .batch(vec![
            stmt(&db, MUTE_TASK, &[s(task_id), s(owner_id), until, n(now)])?,
            stmt(&db, super::revision::BUMP_REVISION, &[s(owner_id)])?,
            stmt(&db, OPEN_RINGING_OF_TASK, &[s(task_id), s(owner_id)])?,
        ])
        .await?;
    if changes(&results[0])? == 0 {
        return Ok(None);
    }
    #[derive(serde::Deserialize)]
    struct Id {
        id: String,
    }
    Ok(Some(
        results[2]
            .results::<Id>()?
            .into_iter()
            .map(|r| r.id)
            .collect(),
    ))
}

/// Whether the task is the owner's. Binds ?1 the task id, ?2 the owner id.
const TASK_OF_OWNER: &str = "SELECT id FROM tasks WHERE id = ?1 AND owner_id = ?2";

/// Revokes the owner's task and closes its open questions, in one batch.
/// `None` when the task is not this owner's; otherwise the questions it closed.
pub async fn revoke_task(
    env: &Env,
    owner_id: &str,
    task_id: &str,
    now: f64,
) -> Result<Option<Vec<ClosedQuestion>>> {
    let db = db(env)?;
    let results = db
        .batch(vec![
            stmt(&db, REVOKE_TASK, &[s(task_id), s(owner_id), n(now)])?,
            questions::close_for_task(&db, task_id, owner_id, CloseReason::SessionEnd, now)?,
            stmt(&db, TASK_OF_OWNER, &[s(task_id), s(owner_id)])?,
            stmt(
                &db,
                super::revision::BUMP_REVISION_IF_REVOKED_NOW,
                &[s(task_id), s(owner_id), n(now)],
            )?,
        ])
        .await?;
    if results[2].results::<Value>()?.is_empty() {
        return Ok(None);
    }
    Ok(Some(questions::closed_by(&results[1])?))
}
