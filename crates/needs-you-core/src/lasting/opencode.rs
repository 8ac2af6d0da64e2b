//! OpenCode's lasting choice: its own `always`, the patterns its permission
//! request names, allowed until OpenCode quits, for every session of it. It
//! is read from the request's input (so under the digest); nothing the
//! request carries beside it is taken.

use serde_json::{json, Value};

use super::offer::{str_at, strings_at, Lasting, Offer, Scope};
use crate::request::{Request, OPENCODE_PERMISSION};

/// The one choice `request` offers, if it is a permission with `always`
/// patterns.
pub(super) fn suggested(request: &Request) -> Vec<Option<Lasting>> {
    let own = (request.tool == OPENCODE_PERMISSION)
        .then(|| always(&request.input))
        .flatten();
    own.map(|s| lasting(s, &request.input))
        .into_iter()
        .collect()
}

/// OpenCode's own lasting choice for a permission `input`: its `always`
/// patterns, as the suggestion `{"reply": "always", "patterns"}`.
pub fn always(input: &Value) -> Option<Value> {
    let items = input.get("always")?.as_array()?;
    // Every pattern a non-empty string, or none is offered: a choice must
    // name all that OpenCode's `always` allows.
    let patterns: Option<Vec<&str>> = items
        .iter()
        .map(|p| p.as_str().filter(|p| !p.is_empty()))
        .collect();
    let patterns = patterns.filter(|p| !p.is_empty())?;
    Some(json!({"reply": "always", "patterns": patterns}))
}

/// The choice, in the words of the request's kind of permission (`bash: git
/// push *`, `edit: *`). Kept in OpenCode's memory: nothing is written.
fn lasting(s: Value, input: &Value) -> Option<Lasting> {
    let patterns = strings_at(&s, "patterns")?.join(", ");
    let rule = match str_at(input, "permission").or_else(|| str_at(input, "type")) {
        Some(kind) => format!("{kind}: {patterns}"),
        None => patterns,
    };
    let label = format!("Allow, and don't ask again for {rule}");
    Some(Lasting {
        offer: Offer::lasting(&s, &label, &rule, Scope::UntilQuit),
        suggestion: s,
        written: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lasting::offered;

    #[test]
    fn opencode_offers_its_own_always_patterns_and_nothing_made_up() {
        let input = json!({"id": "per_1", "permission": "bash", "patterns": ["git push origin main"],
                           "always": ["git push *"], "metadata": {"command": "git push origin main"}});
        let r = Request::new(OPENCODE_PERMISSION, &input);
        let got = offered(&r);
        assert_eq!(got.len(), 1);
        assert_eq!(
            got[0].offer.label,
            "Allow, and don't ask again for bash: git push *"
        );
        assert_eq!(got[0].offer.scope, Some(Scope::UntilQuit));
        assert_eq!(
            got[0].suggestion,
            json!({"reply": "always", "patterns": ["git push *"]})
        );
        assert_eq!(got[0].written, None, "kept in OpenCode's memory");
        // One made up beside it is not OpenCode's own: never offered.
        let mut forged = r.clone();
        forged.lasting = vec![json!({"reply": "always", "patterns": ["*"]})];
        assert_eq!(offered(&forged).len(), 1);
        let none = Request::new(
            OPENCODE_PERMISSION,
            &json!({"permission": "bash", "always": []}),
        );
        assert!(offered(&none).is_empty());
    }
}
