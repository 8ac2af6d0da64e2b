//! The owner's list revision: a counter that every change to what
//! `GET /v1/needs-you` shows raises in the change's own batch, so that the
//! list's ETag says whether anything changed after one read by primary key.
//! Every statement here raises it only when the change happened: a refused
//! request writes nothing, the revision included.

use serde::Deserialize;
use worker::{Env, Result};

use super::{db, s, stmt};

/// Raises the owner's list revision (the list's ETag): every statement batch
/// that changes what `GET /v1/needs-you` shows ends with this one, or with
/// one of the two below, which find the owner from a task (or, for a relay's
/// hello, `answers.rs`'s, which raises it only if an answer failed). Binds ?1
/// the owner id.
pub(super) const BUMP_REVISION: &str = "UPDATE owners SET revision = revision + 1 WHERE id = ?1";

/// [`BUMP_REVISION`] for a report, once its batch has claimed the session:
/// only when this very report was applied (its task live, no newer report of
/// the session before it). A revoked task's hooks, which fire until its agent
/// ends, and stale retries leave the page's ETag alone. Binds ?1 the
/// credential's hash, ?2 the session, ?3 the report's id.
pub(super) const BUMP_REVISION_OF_APPLIED_REPORT: &str = "
UPDATE owners SET revision = revision + 1
WHERE id = (SELECT t.owner_id FROM tasks t JOIN sessions s ON s.task_id = t.id
            WHERE t.credential_hash = ?1 AND s.session = ?2 AND s.applied_id = ?3)";

/// [`BUMP_REVISION`] for the owner of a task. Binds ?1 the task id.
pub(super) const BUMP_REVISION_OF_TASK_ID: &str = "
UPDATE owners SET revision = revision + 1
WHERE id = (SELECT owner_id FROM tasks WHERE id = ?1)";

/// The owner's list revision. Binds ?1 the owner id.
pub(super) const REVISION: &str = "SELECT revision FROM owners WHERE id = ?1";

#[derive(Deserialize)]
pub(super) struct RevisionRow {
    pub revision: i64,
}

pub async fn list_revision(env: &Env, owner_id: &str) -> Result<i64> {
    let db = db(env)?;
    let row: Option<RevisionRow> = stmt(&db, REVISION, &[s(owner_id)])?.first(None).await?;
    Ok(row.map_or(0, |r| r.revision))
}
