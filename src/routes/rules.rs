//! The lasting rules granted from afar: `GET /v1/rules`, every one of the
//! owner's (those of ended tasks too, which a settings file may still hold),
//! and `DELETE /v1/rules/{id}`, which asks the task's relay to take one back.

use worker::{Env, Request};

use needs_you_core::api::{self, Right, RuleState};

use crate::ids::now_ms;
use crate::json::{ok, read_optional_object, signed_field, ApiError, ApiResult};
use crate::limits::{self, Rate};
use crate::store::{self, RevokeAsked};
use crate::{auth, live, relay};

/// `GET /v1/rules`: the owner's rules, oldest first.
pub async fn list(req: Request, env: &Env) -> ApiResult {
    let person = auth::person(&req, env).await?;
    let rules = store::rules_of_owner(env, &person.owner_id, now_ms(), false).await?;
    ok(200, &api::Rules { rules })
}

/// `DELETE /v1/rules/{id}`, body `{signed}` (the owner's device's signed
/// `Revoking`, which the agent's machine checks; without it, the machine
/// takes nothing back): 202 with the rule `revoking`; the task's relay
/// removes it from the file it was written to, now or when its machine
/// connects, and the rule then reads `revoked` (or `gone`, when it was no
/// longer there as written). A session's rule, one already ended, or one of
/// an ended task: 409, saying why. Another owner's: 404.
pub async fn revoke(mut req: Request, env: &Env, rule_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Answer)?;
    limits::within_rate(env, Rate::Answers, &person.credential_hash).await?;
    let signed = signed_field(&read_optional_object(&mut req).await?)?;
    let now = now_ms();
    match store::ask_revoke(env, &person.owner_id, rule_id, signed.as_ref(), now).await? {
        RevokeAsked::Yes(revocation, task_id) => {
            relay::revoke(env, &task_id, &revocation).await;
            live::changed(env, &person.owner_id).await;
            let rule = store::rules_of_owner(env, &person.owner_id, now, false)
                .await?
                .into_iter()
                .find(|r| r.rule_id == rule_id)
                .ok_or_else(ApiError::not_found)?;
            ok(202, &rule)
        }
        RevokeAsked::No(rule) => Err(not_revoked(&rule)),
        RevokeAsked::NotFound => Err(ApiError::not_found()),
    }
}

/// Why a rule is not taken back from afar, for a person.
fn not_revoked(rule: &api::Rule) -> ApiError {
    match rule.state {
        RuleState::Revoked | RuleState::Gone => ApiError::new(
            409,
            "rule_ended",
            format!("{} is taken back already", rule.rule),
        ),
        _ if !rule.scope.written() => ApiError::new(
            409,
            "session_rule",
            format!(
                "{} lasts only for its session, in the agent's memory: it ends with the session",
                rule.rule
            ),
        ),
        _ => ApiError::new(
            409,
            "task_ended",
            format!(
                "its task ended, so its relay cannot reach {}: remove {} from {} there",
                rule.host.as_deref().unwrap_or("the agent's machine"),
                rule.rule,
                rule.scope.place()
            ),
        ),
    }
}
