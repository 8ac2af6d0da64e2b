//! With `NEEDS_YOU_RECORD_DIR` set, the last payload of each kind that a CLI
//! sent is kept as `<cli>.<name>.json` in that folder: the live suite records
//! the real CLIs' payloads this way (the hooks' events, and the requests of
//! Codex's app-server to our client), and the core crate's tests read them
//! as fixtures. Unset, it costs one environment look-up.

use std::path::PathBuf;

use needs_you_core::Cli;
use serde_json::Value;

/// A hook's or plugin's event, named by its `hook_event_name` or `event`.
pub fn event(cli: Cli, event: &Value) {
    let name = ["hook_event_name", "event"]
        .iter()
        .find_map(|k| event.get(k).and_then(Value::as_str))
        .unwrap_or("unknown");
    named(cli, name, event);
}

/// Any payload, under `name` (letters, digits and `_` only).
pub fn named(cli: Cli, name: &str, payload: &Value) {
    let Some(dir) = std::env::var_os("NEEDS_YOU_RECORD_DIR") else {
        return;
    };
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return;
    }
    let path = PathBuf::from(dir).join(format!("{cli}.{name}.json"));
    let text = serde_json::to_string_pretty(payload).unwrap_or_default() + "\n";
    // Prompts and tool output: private, like everything in the state directory.
    let _ = crate::state::write_private(&path, text);
}
