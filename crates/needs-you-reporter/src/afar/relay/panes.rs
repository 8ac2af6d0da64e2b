//! Where an open question's pane is recorded on this machine: the hook
//! records it at the open, with the task it reports for and its CLI; the
//! relay types a reply and shows a screen only into a pane recorded for an
//! open question of its own task.

use std::path::{Path, PathBuf};

use needs_you_core::Cli;
use serde::{Deserialize, Serialize};

use crate::send::Target;
use crate::state::{session_key, write_private, StateDir};
use crate::terminal::Pane;

/// What the hook records for an open question's session: its pane, the
/// task it reports for (the outbox key of its server and credential), and
/// the CLI that asked, whose prompt is read before a reply is typed.
#[derive(Debug, Serialize, Deserialize)]
pub struct PaneRecord {
    pub task: String,
    pub pane: Pane,
    #[serde(default)]
    pub cli: Option<Cli>,
}

/// The key of a server and credential: the outbox's, the relay lock's.
pub fn task_key(target: &Target) -> String {
    session_key(&format!("{}\n{}", target.base, target.token))
}

pub(super) fn pane_file(dir: &Path, session: &str) -> PathBuf {
    dir.join(format!("pane-{}", session_key(session)))
}

/// Records the pane of the session's open question (the hook, at the open).
pub fn record_pane(dir: &Path, session: &str, record: &PaneRecord) {
    if let Ok(text) = serde_json::to_string(record) {
        let _ = write_private(&pane_file(dir, session), text);
    }
}

/// Forgets the session's pane (an open outside tmux).
pub fn forget_pane(dir: &Path, session: &str) {
    let _ = std::fs::remove_file(pane_file(dir, session));
}

/// Whether any session of this task has an open question on this machine.
pub(super) fn anything_open(dir: &StateDir, task: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir.path()) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(key) = name.strip_prefix("pane-") else {
            return false;
        };
        let mine = std::fs::read_to_string(e.path())
            .ok()
            .and_then(|t| serde_json::from_str::<PaneRecord>(&t).ok())
            .is_some_and(|r| r.task == task);
        mine && dir.path().join(format!("open-{key}")).exists()
    })
}
