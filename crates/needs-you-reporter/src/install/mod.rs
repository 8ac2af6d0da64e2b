//! `report-prompt install|uninstall --cli …`: puts our hooks (Claude Code,
//! Codex, Copilot CLI, Gemini CLI) or our plugin (OpenCode, Hermes) where
//! each CLI loads them.
//!
//! Every installer is idempotent, keeps a backup of a file before changing it,
//! shows its changes with `--dry-run`, and leaves a file it cannot parse
//! untouched with a clear error.

mod enabled_list;
pub mod files;
pub mod gemini;
pub mod hooks_json;
pub mod marketplace;
pub mod plugins;
pub mod status;

use std::fs;
use std::path::{Path, PathBuf};

use needs_you_core::classify::hooks;
use needs_you_core::Cli;
use serde_json::Value;

use crate::args::InstallOptions;
pub use files::{write_with_backup, NewFile};
pub use status::{status, Status};

pub fn run(opts: &InstallOptions) -> i32 {
    // A CLI with no hook table of ours loads our plugin instead.
    let result = if opts.cli.describe().hooks.is_empty() {
        plugins::run(opts)
    } else {
        settings_file(opts)
    };
    match result {
        Ok(()) => {
            if !opts.uninstall && !opts.dry_run {
                fix_state_dir(opts.state_dir.clone());
            }
            0
        }
        Err(msg) => {
            eprintln!("report-prompt: {msg}");
            1
        }
    }
}

/// The hooks cannot use a state directory that others can enter, and their
/// one line on stderr ends where nobody reads it (a CLI's transcript). So
/// the installer looks at it as the hooks will find it: one of this user's
/// that others may read but not write is made private; any other problem is
/// named, with the fix.
fn fix_state_dir(explicit: Option<PathBuf>) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let path = crate::state::resolve(explicit);
    let Ok(meta) = fs::symlink_metadata(&path) else {
        return; // the first hook creates it, private
    };
    let mine = meta.is_dir() && meta.uid() == crate::state::uid();
    if mine && meta.mode() & 0o077 == 0 {
        return;
    }
    if mine && meta.mode() & 0o022 == 0 {
        match fs::set_permissions(&path, fs::Permissions::from_mode(0o700)) {
            Ok(()) => println!(
                "state directory {}: others could read it; it is private now (0700)",
                path.display()
            ),
            Err(e) => eprintln!("report-prompt: cannot make {} private: {e}", path.display()),
        }
        return;
    }
    eprintln!(
        "report-prompt: the hooks cannot use the state directory {} (it must be a folder of \
         yours that only you can enter): remove it, or set NEEDS_YOU_STATE_DIR to one",
        path.display()
    );
}

/// The settings files where `cli` reads hooks, the one `install` writes
/// first; none for a CLI that loads our plugin instead.
pub fn settings_paths(cli: Cli) -> Vec<PathBuf> {
    match cli {
        Cli::ClaudeCode => vec![claude_settings_path()],
        Cli::Codex => vec![PathBuf::from(CODEX_MANAGED_HOOKS), codex_user_hooks_path()],
        Cli::Copilot => vec![copilot_hooks_path()],
        Cli::Gemini => vec![gemini_dir().join("settings.json")],
        Cli::Opencode | Cli::Hermes => Vec::new(),
    }
}

/// Claude Code's user-level settings: `$CLAUDE_CONFIG_DIR/settings.json`, else
/// `~/.claude/settings.json`.
pub fn claude_settings_path() -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("settings.json"),
        None => home().join(".claude/settings.json"),
    }
}

/// Codex's managed hooks: trusted by policy, so no review prompt in Codex.
pub const CODEX_MANAGED_HOOKS: &str = "/etc/codex/hooks.json";

/// Codex's per-user hooks file: `$CODEX_HOME/hooks.json`, else `~/.codex/hooks.json`.
pub fn codex_user_hooks_path() -> PathBuf {
    match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(h) => PathBuf::from(h).join("hooks.json"),
        None => home().join(".codex").join("hooks.json"),
    }
}

/// Our hooks file among Copilot CLI's: `$COPILOT_HOME/hooks/needs-you.json`,
/// else `~/.copilot/hooks/needs-you.json` (it reads every file of that folder,
/// in the shape of Claude Code's settings).
pub fn copilot_hooks_path() -> PathBuf {
    copilot_home().join("hooks").join("needs-you.json")
}

/// Copilot CLI's home: `$COPILOT_HOME`, else `~/.copilot`.
pub fn copilot_home() -> PathBuf {
    match std::env::var_os("COPILOT_HOME").filter(|v| !v.is_empty()) {
        Some(h) => PathBuf::from(h),
        None => home().join(".copilot"),
    }
}

/// Gemini CLI's folder: `.gemini` in `$GEMINI_CLI_HOME`, which stands for
/// the home folder, else in the home folder.
pub fn gemini_dir() -> PathBuf {
    match std::env::var_os("GEMINI_CLI_HOME").filter(|v| !v.is_empty()) {
        Some(h) => PathBuf::from(h).join(".gemini"),
        None => home().join(".gemini"),
    }
}

pub fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// This binary's absolute path, for the hook commands.
pub(crate) fn own_path() -> Result<String, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find my own path: {e}"))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    Ok(exe.to_string_lossy().into_owned())
}

fn settings_file(opts: &InstallOptions) -> Result<(), String> {
    let specs = hooks(opts.cli);
    let path = match &opts.path {
        Some(p) => p.clone(),
        None => settings_paths(opts.cli)
            .into_iter()
            .next()
            .ok_or_else(|| format!("{} takes no hooks", opts.cli.display_name()))?,
    };
    // The plugin's hooks and these would both run: every event reported twice.
    if !opts.uninstall && marketplace::plugin_enabled(opts.cli) {
        return Err(format!(
            "the needs-you plugin is installed and enabled in {}, and its hooks report already; \
             nothing was changed (to use these hooks instead: {})",
            opts.cli.display_name(),
            match opts.cli {
                Cli::Codex => "codex plugin remove needs-you@needs-you",
                _ => "claude plugin uninstall needs-you@needs-you",
            }
        ));
    }
    let (original, mut value) = read_json(&path)?;
    let mut changes = if opts.uninstall {
        hooks_json::remove(&mut value, opts.cli)
    } else {
        // Only an explicit --state-dir is written into the hooks; by default
        // each hook finds the directory from its own environment.
        let dir = opts
            .state_dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned());
        hooks_json::add(&mut value, specs, opts.cli, &own_path()?, dir.as_deref())
            .map_err(|e| format!("{}: {e}", path.display()))?
    };
    // Where the hooks can read the credential from the agent, the name an
    // earlier installer kept only widens who else gets it.
    if opts.cli == Cli::Gemini && (opts.uninstall || crate::parent::agent_env_readable()) {
        changes.extend(gemini::forget_credential(&mut value));
    }
    report_changes(&path, &changes, opts.dry_run);
    if changes.is_empty() || opts.dry_run {
        return Ok(());
    }
    let text = serde_json::to_string_pretty(&value).expect("JSON values serialize") + "\n";
    // Codex's managed hooks are read by every user's Codex.
    let new = if path == Path::new(CODEX_MANAGED_HOOKS) {
        NewFile::Shared
    } else {
        NewFile::Private
    };
    write_with_backup(&path, original.as_deref(), &text, new)?;
    if opts.cli == Cli::Codex && !opts.uninstall && path != Path::new(CODEX_MANAGED_HOOKS) {
        println!("Codex runs hooks outside /etc/codex only after you trust them: open Codex and run /hooks.");
    }
    Ok(())
}

pub fn report_changes(path: &Path, changes: &[String], dry_run: bool) {
    if changes.is_empty() {
        println!("{}: nothing to change", path.display());
        return;
    }
    let verb = if dry_run { "would change" } else { "changing" };
    println!("{verb} {}:", path.display());
    for c in changes {
        println!("  {c}");
    }
}

/// Reads a JSON settings file: missing or empty is `{}`; anything that does not
/// parse is an error and the file stays as it is.
pub fn read_json(path: &Path) -> Result<(Option<String>, Value), String> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((None, Value::Object(Default::default())))
        }
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    if text.trim().is_empty() {
        return Ok((Some(text), Value::Object(Default::default())));
    }
    let value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not valid JSON ({e}); it was left untouched",
            path.display()
        )
    })?;
    Ok((Some(text), value))
}
