//! Copilot CLI on this machine: our hooks file among its hooks, and the
//! transcript its notification leaves unnamed.

use std::path::PathBuf;

use needs_you_core::Cli;
use serde_json::Value;

use super::integration::{home, var_dir, Integration};

pub struct Copilot;

/// Copilot CLI's home: `$COPILOT_HOME`, else `~/.copilot`.
pub fn copilot_home() -> PathBuf {
    var_dir("COPILOT_HOME").unwrap_or_else(|| home().join(".copilot"))
}

impl Integration for Copilot {
    fn cli(&self) -> Cli {
        Cli::Copilot
    }

    /// Our hooks file among its own, `hooks/needs-you.json` in its home (it
    /// reads every file of that folder, in the shape of Claude Code's
    /// settings).
    fn settings_paths(&self) -> Vec<PathBuf> {
        vec![copilot_home().join("hooks").join("needs-you.json")]
    }

    /// Its notification names no transcript: its session's is in its home.
    fn transcript_of_session(&self, event: &Value) -> Option<PathBuf> {
        let session = event.get("sessionId")?.as_str()?;
        if session.is_empty() || session.contains(['/', '.']) {
            return None;
        }
        Some(
            copilot_home()
                .join("session-state")
                .join(session)
                .join("events.jsonl"),
        )
    }
}
