//! How an installer writes a file: through a temporary file and a rename,
//! after a backup of what was there, and never wider open than it should be.
//!
//! A CLI's settings file may hold secrets (an MCP server's environment, an
//! API key), so each file an installer makes is created with its final mode
//! from the first byte, never chmod-ed afterwards, and an earlier file of the
//! same name is removed first rather than written over (writing keeps the
//! old file's mode, which may be wider):
//!
//! * the replacement keeps the mode of the file it replaces: the person's
//!   choice stands;
//! * a new file is readable by its owner alone, unless the caller says it is
//!   meant for every user of the machine (Codex's managed hooks in `/etc`);
//! * a backup is readable by its owner alone, and never by more than the
//!   file it copies;
//! * a folder made on the way is its owner's alone (0700), or readable by
//!   every user for a file meant for them all (0755), whatever the umask
//!   ([`create_folders`]): under `umask 000` another user could otherwise
//!   replace the settings and the hooks they run.
//!
//! Reading a settings file ([`read_json`]) and saying what changed in it
//! ([`report_changes`]) are here too: every CLI's installer does both.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::Error;

/// Who a new file is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewFile {
    /// The person alone (0600): settings and plugins in their home.
    Private,
    /// Every user of the machine (0644): a file every user's CLI reads.
    Shared,
}

impl NewFile {
    fn mode(self) -> u32 {
        match self {
            NewFile::Private => 0o600,
            NewFile::Shared => 0o644,
        }
    }

    fn folder_mode(self) -> u32 {
        match self {
            NewFile::Private => 0o700,
            NewFile::Shared => 0o755,
        }
    }
}

/// Makes `path` and every missing folder above it with exactly `mode`,
/// whatever the umask; a folder that is there already is left as it is.
pub fn create_folders(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_folders(parent, mode)?;
    }
    match fs::DirBuilder::new().mode(mode).create(path) {
        Ok(()) => fs::set_permissions(path, fs::Permissions::from_mode(mode)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Owner-only bits: what a backup may keep of its original's mode.
const OWNER_ONLY: u32 = 0o600;

/// Writes `text` to `path` through a temporary file and a rename, after
/// copying the previous content (`original`) to `<path>.needs-you.bak`. A
/// symbolic link (a dotfiles manager's) is followed, so the file it points to
/// is changed and the link stays a link. The modes are the module's rule.
pub fn write_with_backup(
    path: &Path,
    original: Option<&str>,
    text: &str,
    new: NewFile,
) -> Result<(), Error> {
    let linked = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = if linked {
        fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
    } else {
        path.to_owned()
    };
    let path = target.as_path();
    let fail = |what: &str, e: std::io::Error| format!("cannot {what} {}: {e}", path.display());
    if let Some(parent) = path.parent() {
        create_folders(parent, new.folder_mode())
            .map_err(|e| Error::Settings(fail("create the folder of", e)))?;
    }
    let existing = mode_of(path);
    if let Some(original) = original {
        let backup = backup_path(path);
        let mode = existing.unwrap_or(OWNER_ONLY) & OWNER_ONLY;
        create_with_mode(&backup, original, mode)
            .map_err(|e| Error::Settings(fail("back up", e)))?;
        println!("backup: {}", backup.display());
    }
    let tmp = path.with_extension("needs-you.tmp");
    create_with_mode(&tmp, text, existing.unwrap_or_else(|| new.mode()))
        .map_err(|e| Error::Settings(fail("write", e)))?;
    fs::rename(&tmp, path).map_err(|e| Error::Settings(fail("replace", e)))
}

pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".needs-you.bak");
    path.with_file_name(name)
}

/// The read, write and execute bits of the file at `path`, if there is one.
fn mode_of(path: &Path) -> Option<u32> {
    fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o777)
}

/// Creates `path` anew holding `text`, with exactly `mode`: whatever was
/// there is removed first, the file is made with no wider mode than `mode`
/// (the umask can only narrow it), and then set to `mode` itself, so that a
/// replacement keeps its original's bits whatever the umask.
fn create_with_mode(path: &Path, text: &str, mode: u32) -> std::io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    file.set_permissions(fs::Permissions::from_mode(mode))?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
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
pub fn read_json(path: &Path) -> Result<(Option<String>, Value), Error> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok((None, Value::Object(Default::default())))
        }
        Err(e) => {
            return Err(Error::Settings(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    if text.trim().is_empty() {
        return Ok((Some(text), Value::Object(Default::default())));
    }
    let value = serde_json::from_str(&text).map_err(|e| {
        Error::Settings(format!(
            "{} is not valid JSON ({e}); it was left untouched",
            path.display()
        ))
    })?;
    Ok((Some(text), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    fn file(dir: &Path, name: &str, text: &str, mode: u32) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, text).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn a_private_file_s_backup_is_private_even_over_an_earlier_open_one() {
        let t = tempfile::tempdir().unwrap();
        let path = file(t.path(), "settings.json", "{\"key\": \"secret\"}", 0o600);
        // A backup an earlier version left readable by all.
        file(t.path(), "settings.json.needs-you.bak", "old", 0o644);
        write_with_backup(&path, Some("{\"key\": \"secret\"}"), "{}", NewFile::Private).unwrap();
        let backup = backup_path(&path);
        assert_eq!(
            fs::read_to_string(&backup).unwrap(),
            "{\"key\": \"secret\"}"
        );
        assert_eq!(mode(&backup), 0o600);
        assert_eq!(
            mode(&path),
            0o600,
            "the replacement keeps the original's mode"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "{}");
    }

    #[test]
    fn a_replacement_keeps_its_original_s_mode_and_its_backup_is_the_owner_s_alone() {
        let t = tempfile::tempdir().unwrap();
        let path = file(t.path(), "hooks.json", "{}", 0o644);
        write_with_backup(&path, Some("{}"), "{\"hooks\": {}}", NewFile::Private).unwrap();
        assert_eq!(mode(&path), 0o644);
        assert_eq!(mode(&backup_path(&path)), 0o600);
        let narrow = file(t.path(), "narrow.json", "{}", 0o400);
        write_with_backup(&narrow, Some("{}"), "[]", NewFile::Private).unwrap();
        assert_eq!(
            mode(&backup_path(&narrow)),
            0o400,
            "never wider than its original"
        );
    }

    #[test]
    fn a_new_file_is_private_unless_it_is_meant_for_every_user() {
        let t = tempfile::tempdir().unwrap();
        let private = t.path().join("a/settings.json");
        write_with_backup(&private, None, "{}", NewFile::Private).unwrap();
        assert_eq!(mode(&private), 0o600);
        assert!(!backup_path(&private).exists(), "nothing to back up");
        let shared = t.path().join("b/hooks.json");
        write_with_backup(&shared, None, "{}", NewFile::Shared).unwrap();
        assert_eq!(mode(&shared), 0o644);
    }

    #[test]
    fn a_linked_file_is_changed_where_it_lives_and_the_link_stays() {
        let t = tempfile::tempdir().unwrap();
        let real = file(t.path(), "real.json", "{}", 0o600);
        let link = t.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_with_backup(&link, Some("{}"), "[]", NewFile::Private).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "[]");
        assert_eq!(mode(&backup_path(&real)), 0o600);
    }
}
