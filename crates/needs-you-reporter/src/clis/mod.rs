//! What this machine does for each agent CLI, one module each: the
//! settings files where it reads our hooks, the plugin or extension of ours
//! it loads, and the few rules of its own that the installer, the hook, the
//! transcript watcher and `doctor` follow. Everything else reads a CLI
//! through [`of`]; only [`ALL`] lists them, one line each.
//!
//! * `claude_code`, `codex`, `copilot`, `gemini`, `hermes`, `opencode`: each CLI's part.
//! * `integration`: what a part is, and what the parts share.

mod claude_code;
mod codex;
mod copilot;
mod gemini;
mod hermes;
mod integration;
mod opencode;

use needs_you_core::Cli;

pub use integration::{home, Finding, Integration, Plugin, PLUGIN_ID};

pub use claude_code::claude_settings_path;
pub use codex::{bridged as codex_bridged, codex_home, BRIDGED as CODEX_BRIDGED};

/// Every CLI's part, one line each.
pub const ALL: &[&dyn Integration] = &[
    &claude_code::ClaudeCode,
    &codex::Codex,
    &opencode::Opencode,
    &hermes::Hermes,
    &copilot::Copilot,
    &gemini::Gemini,
];

/// `cli`'s part.
pub fn of(cli: Cli) -> &'static dyn Integration {
    *ALL.iter()
        .find(|i| i.cli() == cli)
        .expect("every CLI has its module")
}
