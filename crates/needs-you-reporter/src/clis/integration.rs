//! What a CLI's part on this machine is ([`Integration`]), and what the
//! parts share: the home folder, a folder a variable names, our plugin's id,
//! a plugin of ours and what `doctor` finds.

use std::path::{Path, PathBuf};

use needs_you_core::lasting::Scope;
use needs_you_core::Cli;
use serde_json::Value;

use crate::afar::taker::Taker;
use crate::args::InstallOptions;
use crate::error::Error;
use crate::install::files::NewFile;
use crate::install::reports::Status;

/// One CLI's part on this machine. Every method has the answer of a CLI
/// with nothing particular to say, so a CLI's module writes only its own.
pub trait Integration: Sync {
    /// The CLI it is.
    fn cli(&self) -> Cli;

    /// The settings files where it reads hooks, the one `install` writes
    /// first; none for a CLI that loads a plugin file of ours instead.
    fn settings_paths(&self) -> Vec<PathBuf> {
        Vec::new()
    }

    /// How a settings file at `path` is made when it is new: private, or
    /// readable by every user where every user's CLI reads it.
    fn new_settings_file(&self, _path: &Path) -> NewFile {
        NewFile::Private
    }

    /// What the installer changes in its settings besides our hooks, for
    /// the person.
    fn settings_changes(&self, _settings: &mut Value, _uninstall: bool) -> Vec<String> {
        Vec::new()
    }

    /// What the installer says once our hooks are written into `path`.
    fn after_install(&self, _path: &Path) -> Option<&'static str> {
        None
    }

    /// Our plugin or extension of it, installed with its own command.
    fn plugin(&self) -> Option<&'static Plugin> {
        None
    }

    /// Whether it has that plugin enabled.
    fn plugin_enabled(&self) -> bool {
        false
    }

    /// What `doctor` calls that plugin.
    fn plugin_named(&self) -> String {
        format!("the needs-you plugin ({PLUGIN_ID})")
    }

    /// The hooks files of the copy of that plugin it installed.
    fn installed_plugin_hooks(&self) -> Vec<PathBuf> {
        Vec::new()
    }

    /// How a plugin file of ours reports here (OpenCode's, Hermes's);
    /// `None` for a CLI that takes our hooks.
    fn plugin_file_status(&self) -> Option<Status> {
        None
    }

    /// Writes, or removes, the plugin file of ours it loads.
    fn install_plugin_files(&self, _opts: &InstallOptions, _exe: &str) -> Result<(), Error> {
        Err(Error::Settings(format!(
            "{} takes our hooks, not a plugin file",
            self.cli().display_name()
        )))
    }

    /// Whether this event is this hook's to report: one that another of
    /// our parts lists (Codex's app-server client) is not. An error says
    /// why no hook of this process may report at all.
    fn reported_here(&self, _event: &Value, _agent: Option<&str>) -> Result<bool, Error> {
        Ok(true)
    }

    /// Whether a reply's answer reaches the agent as a message rather than
    /// typed keys (Codex's app-server client sends it).
    fn replies_as_messages(&self) -> bool {
        false
    }

    /// The transcript of a session whose event names none.
    fn transcript_of_session(&self, _event: &Value) -> Option<PathBuf> {
        None
    }

    /// A dialog's text with what the event leaves out and the CLI keeps
    /// elsewhere (Claude Code's plan, from its plan file).
    fn with_more(&self, _event: &Value, text: String) -> String {
        text
    }

    /// How its hook that waits while a dialog is on screen
    /// ([`needs_you_core::classify::HookSpec::waits`]) hands an answer
    /// from afar to the agent; `None` for a CLI with no such hook.
    fn waiting_hook_taker<'a>(&self, _event: &'a Value) -> Option<Box<dyn Taker + 'a>> {
        None
    }

    /// The folder it keeps its own settings in (`~/.claude`, `$CODEX_HOME`),
    /// as this process's environment says; `None` for a CLI that writes no
    /// lasting rule there.
    fn config_dir(&self) -> Option<PathBuf> {
        None
    }

    /// The file a lasting rule of `scope` goes to when it writes one, for a
    /// session in `cwd`, with its settings in `config`; `None` for a rule it
    /// keeps in memory.
    fn rule_file(&self, _scope: Scope, _cwd: &Path, _config: &Path) -> Option<PathBuf> {
        None
    }

    /// What `doctor` finds in its settings beyond our hooks.
    fn findings(&self) -> Vec<Finding> {
        Vec::new()
    }
}

/// Our plugin's id in Claude Code and Codex: plugin `needs-you` of
/// marketplace `needs-you`.
pub const PLUGIN_ID: &str = "needs-you@needs-you";

/// A plugin (or extension) of ours that a CLI installs with its own
/// command, from its folder in the repository.
pub struct Plugin {
    /// Its folder in the repository.
    pub folder: &'static str,
    /// Its manifest, in that folder, and whether it is an extension's (a
    /// few fields of its own) or a plugin's.
    pub manifest: &'static str,
    pub extension: bool,
    /// The command that removes it, for our settings hooks instead.
    pub remove: &'static str,
    /// How the CLI brings its copy of it up to date.
    pub update: &'static str,
}

/// Something `doctor` finds, for the person.
pub enum Finding {
    Ok(String),
    /// A problem, and its fix.
    Bad(String, String),
    Note(String),
}

/// The home folder, where every CLI keeps its settings by default.
pub fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// The folder a variable names, if it is set and not empty.
pub(super) fn var_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}
