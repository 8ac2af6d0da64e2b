//! `report-prompt install|uninstall --cli …`: puts our hooks (Claude Code,
//! Codex, Copilot CLI, Gemini CLI) or our plugin (OpenCode, Hermes) where
//! each CLI loads them.
//!
//! Every installer is idempotent, keeps a backup of a file before changing it,
//! shows its changes with `--dry-run`, and leaves a file it cannot parse
//! untouched with a clear error.
//!
//! * [`files`]: how a file is written, backed up and kept private.
//! * [`hooks_json`]: our hooks in a Claude Code `settings.json` or a Codex `hooks.json`.
//! * `enabled_list`: our name in Hermes's `plugins.enabled`.
//! * [`marketplace`]: our plugins and extension, installed with each CLI's own command.
//! * [`plugins`]: the plugin files OpenCode and Hermes load.
//! * [`reports`], [`mod@status`]: how, and whether, a CLI reports on this machine.

pub(crate) mod enabled_list;
pub mod files;
pub mod hooks_json;
pub mod marketplace;
pub mod plugins;
pub mod reports;
pub mod status;

use std::fs;
use std::path::PathBuf;

use needs_you_core::classify::hooks;

use crate::args::InstallOptions;
use crate::clis;
pub use crate::clis::home;
use crate::error::Error;
pub use files::{read_json, report_changes, write_with_backup, NewFile};
pub use reports::Status;
pub use status::status;

pub fn run(opts: &InstallOptions) -> i32 {
    // A CLI with no hook table of ours loads our plugin instead.
    let result = if opts.cli.describe().hooks.is_empty() {
        own_path().and_then(|exe| clis::of(opts.cli).install_plugin_files(opts, &exe))
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

/// This binary's absolute path, for the hook commands.
pub(crate) fn own_path() -> Result<String, Error> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::Settings(format!("cannot find my own path: {e}")))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    Ok(exe.to_string_lossy().into_owned())
}

fn settings_file(opts: &InstallOptions) -> Result<(), Error> {
    let specs = hooks(opts.cli);
    let path = match &opts.path {
        Some(p) => p.clone(),
        None => clis::of(opts.cli)
            .settings_paths()
            .into_iter()
            .next()
            .ok_or_else(|| {
                Error::Settings(format!("{} takes no hooks", opts.cli.display_name()))
            })?,
    };
    let integration = clis::of(opts.cli);
    // The plugin's hooks and these would both run: every event reported twice.
    if let Some(plugin) = integration.plugin().filter(|_| !opts.uninstall) {
        if integration.plugin_enabled() {
            return Err(Error::Settings(format!(
                "the needs-you plugin is installed and enabled in {}, and its hooks report already; \
                 nothing was changed (to use these hooks instead: {})",
                opts.cli.display_name(),
                plugin.remove
            )));
        }
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
            .map_err(|e| Error::Settings(format!("{}: {e}", path.display())))?
    };
    changes.extend(integration.settings_changes(&mut value, opts.uninstall));
    report_changes(&path, &changes, opts.dry_run);
    if changes.is_empty() || opts.dry_run {
        return Ok(());
    }
    let text = serde_json::to_string_pretty(&value).expect("JSON values serialize") + "\n";
    let new = integration.new_settings_file(&path);
    write_with_backup(&path, original.as_deref(), &text, new)?;
    if let Some(note) = integration.after_install(&path).filter(|_| !opts.uninstall) {
        println!("{note}");
    }
    Ok(())
}
