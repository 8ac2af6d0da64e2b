//! The lasting choices of a permission: "allow, and don't ask again for …",
//! offered from afar exactly as the CLI itself suggests them, never a rule we
//! made up or widened.
//!
//! * The CLI's suggestions travel as it gave them, in the request
//!   ([`crate::request::Request::lasting`]); the Worker lists the choices
//!   [`offered`] builds from them, each with the words the page and its
//!   confirmation show (the rule, where it is written, how long it lasts).
//! * A choice's id is a hash of the suggestion itself ([`id_of`]): the hook
//!   that takes an answer finds the suggestion with that id in the dialog on
//!   its own screen and applies its own copy. A suggestion that a made-up
//!   report showed, and the CLI never made, has an id no dialog offers: it is
//!   never applied.
//! * What is never offered: a suggestion that switches the CLI's mode (it is
//!   broader than any one request), one that denies, asks or removes rules,
//!   and, for Claude Code, a folder's access that the terminal offers only
//!   together with a mode switch.
//!
//! * `offer`: what a choice is, whatever CLI offers it: [`Scope`], [`Offer`], [`Written`].
//! * `claude_code`, `codex`, `opencode`: each CLI's suggestions read as choices, and its rules
//!   taken back out of its files.

mod claude_code;
mod codex;
mod offer;
mod opencode;

pub use codex::AMEND_POLICY;
pub use offer::{Lasting, Offer, Scope, TakenOut, Written};
pub use opencode::always as opencode_always;

use crate::kinds::Cli;
use crate::request::Request;

/// Most lasting choices one permission offers.
pub const MAX_LASTING: usize = 4;

/// The id of the choice that applies `suggestion` ([`crate::afar::lasting_id`]).
pub use crate::afar::is_lasting_id as is_id;
pub use crate::afar::lasting_id as id_of;

/// The lasting choices `request` offers, in the order its CLI suggested
/// them, at most [`MAX_LASTING`]; none when it suggests nothing its CLI's
/// module knows to be as narrow as the CLI's own dialog. Each CLI's
/// suggestions are read in its own shapes only, by the CLI whose tool the
/// request names ([`Request::cli`], which the digest binds).
pub fn offered(request: &Request) -> Vec<Lasting> {
    let suggested = match request.cli() {
        Cli::Codex => codex::suggested(request),
        Cli::Opencode => opencode::suggested(request),
        _ => claude_code::suggested(request),
    };
    let mut out: Vec<Lasting> = Vec::new();
    for lasting in suggested.into_iter().flatten() {
        if out.iter().any(|l| l.offer.id == lasting.offer.id) {
            continue;
        }
        out.push(lasting);
        if out.len() == MAX_LASTING {
            break;
        }
    }
    out
}

/// The lasting choice offered with `id`, if `request` offers it.
pub fn find(request: &Request, id: &str) -> Option<Lasting> {
    offered(request).into_iter().find(|l| l.offer.id == id)
}

/// `written` taken back out of `text`, its file's contents, as the CLI whose
/// file it is keeps it: only the entries still there as written, nothing
/// else of the file.
pub fn take_out(written: &Written, text: &str) -> TakenOut {
    match written.scope.cli() {
        Cli::Codex => codex::take_out(text, written),
        _ => claude_code::take_out(text, written),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_offers_each_choice_once_and_at_most_four() {
        let rule = |n: usize| {
            json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": format!("t{n}")}],
                   "behavior": "allow", "destination": "session"})
        };
        let mut r = Request::new("Bash", &json!({"command": "t"}));
        r.lasting = vec![rule(0), rule(0), rule(1), rule(2), rule(3), rule(4)];
        let ids: Vec<String> = offered(&r).into_iter().map(|l| l.offer.id).collect();
        let want: Vec<String> = (0..4).map(|n| id_of(&rule(n))).collect();
        assert_eq!(ids, want);
    }

    #[test]
    fn each_scope_is_kept_by_the_cli_whose_choice_names_it() {
        for scope in [
            Scope::Session,
            Scope::ProjectLocal,
            Scope::Project,
            Scope::User,
        ] {
            assert_eq!(scope.cli(), Cli::ClaudeCode);
        }
        assert_eq!(Scope::CodexRules.cli(), Cli::Codex);
        assert_eq!(Scope::UntilQuit.cli(), Cli::Opencode);
    }
}
