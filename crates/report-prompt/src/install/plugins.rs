//! Installing our OpenCode and Hermes plugins.

use crate::args::InstallOptions;

pub fn run(opts: &InstallOptions) -> Result<(), String> {
    Err(format!(
        "installing the {} plugin is not available yet",
        opts.cli
    ))
}
