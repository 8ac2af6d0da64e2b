//! How a CLI reports on this machine, as it loads our part: what
//! [`super::status()`] answers, and each CLI's module in `clis` for a plugin
//! file of ours.

/// How a CLI reports, as it loads our part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Through the needs-you plugin from its marketplace, or OpenCode's
    /// package: `name` says which.
    Plugin { name: String },
    /// Through our hooks in its settings, or our plugin file: `place`.
    Installed { place: String },
    /// Two ways at once, so every event is reported twice: `what`, and the
    /// command that leaves one.
    Twice { what: String, fix: String },
    /// Installed in `place` but not enabled there (Hermes's
    /// `plugins.enabled`): it reports nothing.
    Disabled { place: String },
    /// Not installed; `place` is where it would be.
    Missing { place: String },
}

impl Status {
    /// Whether its events reach the Worker at all.
    pub fn reports(&self) -> bool {
        matches!(
            self,
            Status::Plugin { .. } | Status::Installed { .. } | Status::Twice { .. }
        )
    }
}
