//! The lasting rules granted from afar: recorded when the agent takes an
//! answer that chose one, shown on their task, and taken back through the
//! task's relay, which removes each from the file it was written to.

use serde::Deserialize;
use wasm_bindgen::JsValue;
use worker::{Env, Result};

use needs_you_core::api::{self, RuleState};
use needs_you_core::relay_messages::{Revocation, RevokeOutcome};
use needs_you_core::signed::Envelope;

use super::sql::{db, n, s, stmt};

/// Records the rule that answer ?1 of task ?2 granted, once the agent took
/// it (its state is now ?3, `taken`): the question's offered choice whose id
/// the answer's decision names, as the Worker built it from the request.
/// A sealed question's choice keeps its words sealed, in `rule`, and its
/// id as the scope they open in.
/// An answer that chose no lasting choice records nothing. Binds ?1 the
/// answer id, ?2 the task id, ?3 the state just marked, ?5 now, ?7 the new
/// rule's id (?4 and ?6, the mark's reason, unused).
pub(super) const RECORD: &str = "
INSERT OR IGNORE INTO rules (id, owner_id, task_id, question_id, answer_id, device_id, cli, host,
                             rule, label, scope, granted_at, sealed_scope)
SELECT ?7, a.owner_id, a.task_id, a.question_id, a.id, a.device_id, q.cli,
       json_extract(q.terminal, '$.host'),
       json_extract(d.value, '$.rule'), json_extract(d.value, '$.label'),
       json_extract(d.value, '$.scope'), ?5,
       CASE WHEN q.sealed IS NOT NULL THEN json_extract(d.value, '$.id') END
FROM answers a JOIN questions q ON q.id = a.question_id, json_each(q.decisions) d
WHERE a.id = ?1 AND a.task_id = ?2 AND ?3 = 'taken' AND a.state = 'taken'
  AND json_valid(a.body) AND json_extract(d.value, '$.id') = json_extract(a.body, '$.decision')
  AND json_extract(d.value, '$.lasting') AND json_extract(d.value, '$.rule') IS NOT NULL";

/// A rule as every list shows it: asked back (`revoking`) only while its task
/// lives, whose relay can still take it back; after, it is `granted` again,
/// and says why. Binds ?2 now.
macro_rules! rule_columns {
    () => {
        "
SELECT r.id AS rule_id, r.task_id, r.question_id, r.answer_id, r.cli, r.host, r.rule, r.label, r.scope, r.granted_at, r.sealed_scope,
       CASE WHEN r.device_id IS NULL THEN 'the owner' ELSE coalesce((SELECT name FROM devices WHERE id = r.device_id), 'a removed device') END AS granted_by,
       CASE WHEN r.ended_at IS NOT NULL THEN r.end_reason
            WHEN r.revoke_asked_at IS NOT NULL AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2) THEN 'revoking'
            ELSE 'granted' END AS state,
       CASE WHEN r.ended_at IS NULL AND r.revoke_asked_at IS NOT NULL AND NOT (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2))
            THEN 'its task ended before its machine could take it back: remove it there by hand' ELSE r.note END AS note
FROM rules r JOIN tasks t ON t.id = r.task_id"
    };
}

/// The owner's rules, oldest first, of the live tasks only (?3 1) or of
/// all (?3 0). Binds ?1 the owner id, ?2 now.
pub(super) const RULES_OF_OWNER: &str = concat!(
    rule_columns!(),
    "
WHERE r.owner_id = ?1
  AND (?3 = 0 OR (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2)))
ORDER BY r.granted_at"
);

/// The owner's rules at `now`: of live tasks only, or all of them.
pub async fn rules_of_owner(
    env: &Env,
    owner_id: &str,
    now: f64,
    live_only: bool,
) -> Result<Vec<api::Rule>> {
    let db = db(env)?;
    stmt(
        &db,
        RULES_OF_OWNER,
        &[s(owner_id), n(now), n(if live_only { 1.0 } else { 0.0 })],
    )?
    .all()
    .await?
    .results::<api::Rule>()
    .map(|r| r.into_iter().map(api::Rule::worded).collect())
}

/// Puts each rule on its task, in words.
pub fn on_their_tasks(tasks: &mut [api::Task], rules: Vec<api::Rule>) {
    for rule in rules.into_iter().map(api::Rule::worded) {
        if let Some(t) = tasks.iter_mut().find(|t| t.task_id == rule.task_id) {
            t.rules.push(rule);
        }
    }
}

/// Asks for the owner's rule ?1 (owner ?2) to be taken back, at ?3: one
/// written to a file, still in force, of a live task (whose relay can reach
/// its machine). Binds ?1 the rule id, ?2 the owner id, ?3 now, ?4 the
/// signed statement of its taking back (JSON, or null).
const ASK_REVOKE: &str = "
UPDATE rules SET revoke_asked_at = ?3, note = NULL, revoke_signed = ?4
WHERE id = ?1 AND owner_id = ?2 AND ended_at IS NULL AND scope != 'session'
  AND EXISTS (SELECT 1 FROM tasks t WHERE t.id = rules.task_id AND t.revoked_at IS NULL
              AND (t.expires_at IS NULL OR t.expires_at > ?3))
RETURNING id AS rule_id, task_id, answer_id, revoke_signed AS signed,
          (SELECT o.device_list FROM owners o WHERE o.id = rules.owner_id) AS devices";

/// One of the owner's rules, whatever its state. Binds ?1 the rule id, ?2
/// now, ?3 the owner id.
const RULE_OF_OWNER: &str = concat!(
    rule_columns!(),
    "
WHERE r.id = ?1 AND r.owner_id = ?3"
);

/// What asking to take a rule back did.
pub enum RevokeAsked {
    /// Asked: the task's relay hears of it (now, or when it connects).
    Yes(Revocation, String),
    /// Not asked, and why: the rule as it is.
    No(Box<api::Rule>),
    /// No rule of the owner's.
    NotFound,
}

pub async fn ask_revoke(
    env: &Env,
    owner_id: &str,
    rule_id: &str,
    signed: Option<&Envelope>,
    now: f64,
) -> Result<RevokeAsked> {
    let db = db(env)?;
    let signed = signed.map_or(JsValue::NULL, |e| {
        s(&serde_json::to_string(e).unwrap_or_default())
    });
    let results = db
        .batch(vec![
            stmt(&db, ASK_REVOKE, &[s(rule_id), s(owner_id), n(now), signed])?,
            stmt(&db, super::revision::BUMP_REVISION, &[s(owner_id)])?,
            stmt(&db, RULE_OF_OWNER, &[s(rule_id), n(now), s(owner_id)])?,
        ])
        .await?;
    let rule = results[2]
        .results::<api::Rule>()?
        .into_iter()
        .next()
        .map(api::Rule::worded);
    Ok(
        match (results[0].results::<Asked>()?.into_iter().next(), rule) {
            (Some(a), _) => {
                let task_id = a.task_id.clone();
                RevokeAsked::Yes(a.into(), task_id)
            }
            (None, Some(rule)) => RevokeAsked::No(Box::new(rule)),
            (None, None) => RevokeAsked::NotFound,
        },
    )
}

/// A rule asked to be taken back, as D1 gives it: its signed statement and
/// the owner's device list as JSON text.
#[derive(Deserialize)]
struct Asked {
    rule_id: String,
    task_id: String,
    answer_id: String,
    signed: Option<String>,
    devices: Option<String>,
}

impl From<Asked> for Revocation {
    fn from(a: Asked) -> Revocation {
        Revocation {
            rule_id: a.rule_id,
            answer_id: a.answer_id,
            signed: a.signed.and_then(|e| serde_json::from_str(&e).ok()),
            devices: a.devices.and_then(|e| serde_json::from_str(&e).ok()),
        }
    }
}

/// The task's rules asked to be taken back and not ended yet, for its relay.
/// Binds ?1 the task id.
const REVOKING_OF_TASK: &str = "
SELECT id AS rule_id, task_id, answer_id, revoke_signed AS signed,
       (SELECT o.device_list FROM owners o WHERE o.id = rules.owner_id) AS devices
FROM rules
WHERE task_id = ?1 AND revoke_asked_at IS NOT NULL AND ended_at IS NULL
ORDER BY revoke_asked_at";

pub async fn revoking_of_task(env: &Env, task_id: &str) -> Result<Vec<Revocation>> {
    let db = db(env)?;
    let asked: Vec<Asked> = stmt(&db, REVOKING_OF_TASK, &[s(task_id)])?
        .all()
        .await?
        .results()?;
    Ok(asked.into_iter().map(Revocation::from).collect())
}

/// What the task's relay did with a rule it was asked to take back: ended
/// (`revoked`, `gone`), or left asked no more, with why (it could not).
/// Binds ?1 the rule id, ?2 the task id, ?3 the end reason (or null), ?4
/// the note, ?5 now.
const REVOKED: &str = "
UPDATE rules SET ended_at = CASE WHEN ?3 IS NULL THEN NULL ELSE ?5 END, end_reason = ?3, note = ?4,
       revoke_asked_at = CASE WHEN ?3 IS NULL THEN NULL ELSE revoke_asked_at END
WHERE id = ?1 AND task_id = ?2 AND revoke_asked_at IS NOT NULL AND ended_at IS NULL";

/// Raises the list revision of the owner of task ?2 (binds ?1 as [`REVOKED`]).
const BUMP_REVISION_OF_TASK: &str = "
UPDATE owners SET revision = revision + 1 WHERE id = (SELECT owner_id FROM tasks WHERE id = ?2 AND ?1 IS NOT NULL)";

pub async fn revoked(
    env: &Env,
    task_id: &str,
    rule_id: &str,
    outcome: RevokeOutcome,
    note: &str,
    now: f64,
) -> Result<()> {
    let ended = match outcome {
        RevokeOutcome::Removed => Some(RuleState::Revoked),
        RevokeOutcome::Gone => Some(RuleState::Gone),
        RevokeOutcome::Failed => None,
    };
    let db = db(env)?;
    let args = [
        s(rule_id),
        s(task_id),
        ended.map_or(JsValue::NULL, |e| s(e.as_str())),
        s(note),
        n(now),
    ];
    db.batch(vec![
        stmt(&db, REVOKED, &args)?,
        stmt(&db, BUMP_REVISION_OF_TASK, &args[..2])?,
    ])
    .await?;
    Ok(())
}
