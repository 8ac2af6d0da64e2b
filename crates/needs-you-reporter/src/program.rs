//! Finding a program as `exec` would: `doctor` (which report-prompt the
//! plugins' hooks run) and `needs-you run` (the agent, tmux, the native
//! report-prompt) ask the same way.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The program's path, as `exec` would find it (`None`: not found).
pub fn find_program(program: &OsStr) -> Option<PathBuf> {
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let p = Path::new(program);
    if p.components().count() > 1 {
        return executable(p).then(|| p.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(p))
        .find(|c| executable(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_found_on_the_path_or_by_its_own_path() {
        assert!(find_program(OsStr::new("sh")).is_some());
        assert!(find_program(OsStr::new("/bin/sh")).is_some());
        assert!(find_program(OsStr::new("no-such-program-here")).is_none());
    }
}
