//! The owner's list revision: a counter that every change to what
//! `GET /v1/needs-you` shows raises in the change's own batch, so that the
//! list's ETag says whether anything changed after one read by primary key.
//! Every statement here raises it only when the change happened: a refused
//! request writes nothing, the revision included.

use serde::Deserialize;
use worker::{Env, Result};

use super::sql::{db, s, stmt};

/// Raises the owner's list revision (the list's ETag): every statement batch
/// that changes what `GET /v1/needs-you` shows ends with this one (when the
/// batch cannot be refused), or with one of those below, each of which raises
/// it only if its change happened (and, for a relay's hello, `answers.rs`'s,
/// which raises it only if an answer failed). Binds ?1 the owner id.
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

/// [`BUMP_REVISION`] once the owner's question closed in this very request
/// (closed at ?3, the request's now): a refused dismiss leaves it. Binds ?1
/// the question id, ?2 the owner id, ?3 now.
pub(super) const BUMP_REVISION_IF_CLOSED_NOW: &str = "
UPDATE owners SET revision = revision + 1
WHERE id = ?2 AND EXISTS (SELECT 1 FROM questions WHERE id = ?1 AND owner_id = ?2 AND closed_at = ?3)";

/// [`BUMP_REVISION`] once the owner's task was revoked in this very request.
/// Binds ?1 the task id, ?2 the owner id, ?3 now.
pub(super) const BUMP_REVISION_IF_REVOKED_NOW: &str = "
UPDATE owners SET revision = revision + 1
WHERE id = ?2 AND EXISTS (SELECT 1 FROM tasks WHERE id = ?1 AND owner_id = ?2 AND revoked_at = ?3)";

/// [`BUMP_REVISION`] once answer ?1 of the owner exists: a refused answer
/// queues nothing. Binds ?1 the answer id, ?2 the owner id.
pub(super) const BUMP_REVISION_IF_ANSWER: &str = "
UPDATE owners SET revision = revision + 1
WHERE id = ?2 AND EXISTS (SELECT 1 FROM answers WHERE id = ?1 AND owner_id = ?2)";

/// [`BUMP_REVISION`] for the owner of task ?2 once its answer ?1 moved to
/// state ?3 in this very request (at ?5): a relay that says again what it
/// said before changes nothing. Binds as `answers::MARK`.
pub(super) const BUMP_REVISION_IF_MARKED: &str = "
UPDATE owners SET revision = revision + 1
WHERE id = (SELECT owner_id FROM tasks WHERE id = ?2)
  AND EXISTS (SELECT 1 FROM answers WHERE id = ?1 AND task_id = ?2 AND state = ?3 AND updated_at = ?5)";

/// [`BUMP_REVISION`] for owner ?2 once their answer ?1 was taken back in
/// this very request (at ?3).
pub(super) const BUMP_REVISION_IF_TAKEN_BACK: &str = "
UPDATE owners SET revision = revision + 1
WHERE id = ?2 AND EXISTS (SELECT 1 FROM answers WHERE id = ?1 AND owner_id = ?2
                          AND state = 'failed' AND updated_at = ?3)";

/// [`BUMP_REVISION`] for the owner of question ?1 while it is not marked
/// notified: in the batch just before `questions::MARK_NOTIFIED`, so that
/// only its first ring raises it (the channels of one ring record theirs
/// within the same millisecond, which a test of `notified_at` against now
/// would count again).
pub(super) const BUMP_REVISION_IF_NOT_NOTIFIED: &str = "
UPDATE owners SET revision = revision + 1
WHERE id = (SELECT owner_id FROM questions WHERE id = ?1 AND notified_at IS NULL)";

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
