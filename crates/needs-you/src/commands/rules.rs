//! `rules`: the lasting rules granted from afar, and `rules revoke ID`,
//! followed until the task's relay says how it went.

use std::time::{Duration, Instant};

use needs_you_core::api::{Rule, RuleState, Rules};
use needs_you_core::signed::{self, Revoking};
use serde_json::json;

use super::{logged_in, now_ms, path_part, print_json, trusting};
use crate::display;
use crate::fail::{exit, Fail, Result};
use crate::keys;

/// How long `revoke` follows its rule: the relay answers in a moment when
/// the agent's machine is connected; after that, it is taken back when it
/// connects, which the page and `rules` show.
const FOLLOW_FOR: Duration = Duration::from_secs(10);

pub fn list(json_out: bool) -> Result<i32> {
    let (login, client) = logged_in()?;
    let mut rules: Rules = client.get("/v1/rules")?;
    // Sealed words opened here, in the JSON too: whoever reads it holds the key.
    let mut opener = super::cards::Built::new(&login);
    rules.rules = (rules.rules.into_iter())
        .map(|r| opener.rule(&client, r))
        .collect();
    if json_out {
        print_json(&rules);
    } else {
        print!("{}", display::rules(&rules.rules, now_ms()));
    }
    Ok(exit::OK)
}

/// `rules revoke RULE`: the taking back signed here ([`Revoking`], naming
/// the answer that granted the rule), which the agent's machine checks
/// before it takes anything back.
pub fn revoke(rule_id: &str) -> Result<i32> {
    let (login, client) = logged_in()?;
    let path = format!("/v1/rules/{}", path_part(rule_id)?);
    let listed: Rules = client.get("/v1/rules")?;
    let signed = match (
        listed.rules.iter().find(|r| r.rule_id == rule_id),
        trusting::signer(&login, &client)?,
    ) {
        (Some(rule), Some(signer)) => Some(signer.sign(&Revoking {
            v: signed::VERSION,
            owner: signer.owner.clone(),
            id: keys::random_id()?,
            rule_id: rule.rule_id.clone(),
            answer_id: rule.answer_id.clone(),
            expires_at: now_ms() as i64 + signed::LIFETIME_MS,
        })),
        // The server says why: no such rule, or no right to take it back.
        _ => None,
    };
    let asked: Rule = client.delete_with(&path, &json!({ "signed": signed }))?;
    println!(
        "Asked to take back {} from {} on {}…",
        asked.rule,
        asked.place,
        asked.host.as_deref().unwrap_or("the agent's machine")
    );
    let deadline = Instant::now() + FOLLOW_FOR;
    loop {
        let rules: Rules = client.get("/v1/rules")?;
        let now = rules.rules.into_iter().find(|r| r.rule_id == asked.rule_id);
        let Some(rule) = now else {
            return Err(Fail::new(exit::REFUSED, "the rule is gone from the list"));
        };
        match rule.state {
            RuleState::Revoked => {
                println!("Taken back: {}.", rule.note.unwrap_or_default());
                return Ok(exit::OK);
            }
            RuleState::Gone => {
                println!("{}.", rule.note.unwrap_or_default());
                return Ok(exit::OK);
            }
            RuleState::Granted => {
                return Err(Fail::new(
                    exit::REFUSED,
                    format!("not taken back: {}", rule.note.unwrap_or_default()),
                ))
            }
            RuleState::Revoking if Instant::now() >= deadline => {
                println!("Its machine is not connected: the rule is taken back when it is.");
                return Ok(exit::OK);
            }
            RuleState::Revoking => std::thread::sleep(Duration::from_millis(300)),
        }
    }
}
