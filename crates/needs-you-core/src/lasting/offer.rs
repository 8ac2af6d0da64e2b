//! What a lasting choice is, whatever CLI offers it: where it is kept
//! ([`Scope`]), the choice as every screen shows it ([`Offer`]), and what it
//! writes into a file ([`Written`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kinds::Cli;
use crate::text;

wire_enum! {
    /// Where a lasting rule is kept, and so how long it lasts.
    Scope {
        /// In the agent's memory: it ends with its session.
        Session = "session",
        /// In the agent's memory for every session of it: it ends when the
        /// agent quits (OpenCode's `always`).
        UntilQuit = "until_quit",
        /// The project's own, unshared settings (Claude Code's
        /// `.claude/settings.local.json`).
        ProjectLocal = "project_local",
        /// The project's shared settings (`.claude/settings.json`).
        Project = "project",
        /// The person's settings, for every project.
        User = "user",
        /// Codex's exec-policy rules (`$CODEX_HOME/rules/`), for every
        /// project.
        CodexRules = "codex_rules",
    }
}

impl Scope {
    /// Whether the rule is in a file, and so outlives the task.
    pub fn written(self) -> bool {
        !matches!(self, Scope::Session | Scope::UntilQuit)
    }

    /// The CLI that keeps a rule of this scope: the one whose files (or
    /// memory) it is in.
    pub fn cli(self) -> Cli {
        match self {
            Scope::Session | Scope::ProjectLocal | Scope::Project | Scope::User => Cli::ClaudeCode,
            Scope::UntilQuit => Cli::Opencode,
            Scope::CodexRules => Cli::Codex,
        }
    }

    /// Where it is kept, in words: "this session", "this project's …".
    pub fn place(self) -> &'static str {
        match self {
            Scope::Session => "this session only, in the agent's memory",
            Scope::UntilQuit => "the agent's memory, for all its sessions",
            Scope::ProjectLocal => "this project's .claude/settings.local.json",
            Scope::Project => "this project's .claude/settings.json, shared with the repository",
            Scope::User => "your ~/.claude/settings.json, for every project",
            Scope::CodexRules => "Codex's rules (~/.codex/rules), for every project",
        }
    }

    /// How long it lasts, in words.
    pub fn lasts(self) -> &'static str {
        match self {
            Scope::Session => "until the session ends",
            Scope::UntilQuit => "until the agent quits",
            _ => "until it is taken back: it outlives the task",
        }
    }
}

/// One choice a permission offers from afar, as every screen shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offer {
    /// `allow`, `deny`, or a lasting choice's id
    /// ([`crate::afar::lasting_id`]).
    pub id: String,
    /// The choice in a few words.
    pub label: String,
    /// Whether it lasts beyond this request.
    pub lasting: bool,
    /// What a lasting choice allows from now on, as the CLI writes it
    /// (`Bash(npm test *)`, `access to /srv/data`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Where a lasting choice is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// The same in words, for the confirmation: where it is written, and
    /// how long it lasts ([`Scope::place`], [`Scope::lasts`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lasts: Option<String>,
}

impl Offer {
    /// The lasting choice that applies `suggestion`, kept in `scope`: its id
    /// is the suggestion's own, its words are shown with every invisible
    /// character written out.
    pub(crate) fn lasting(suggestion: &Value, label: &str, rule: &str, scope: Scope) -> Offer {
        Offer {
            id: crate::afar::lasting_id(suggestion),
            label: text::visible(label),
            lasting: true,
            rule: Some(text::visible(rule)),
            scope: Some(scope),
            place: Some(scope.place().to_owned()),
            lasts: Some(scope.lasts().to_owned()),
        }
    }

    /// Allow once, and deny: what every permission that takes a decision
    /// offers.
    pub fn once() -> [Offer; 2] {
        let plain = |id: &str, label: &str| Offer {
            id: id.to_owned(),
            label: label.to_owned(),
            lasting: false,
            rule: None,
            scope: None,
            place: None,
            lasts: None,
        };
        [plain("allow", "Allow once"), plain("deny", "Deny")]
    }
}

/// A lasting choice, the suggestion it applies as the CLI gave it, and what
/// applying it writes into a file (none for a rule kept in the agent's
/// memory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lasting {
    pub offer: Offer,
    pub suggestion: Value,
    pub written: Option<Written>,
}

/// What a lasting choice kept in a file writes there: the entries it adds
/// to the list `list` of the file its `scope` names (a settings file's
/// `permissions.allow`, Codex's rules).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Written {
    pub scope: Scope,
    /// `allow`, `additionalDirectories`, `rules`.
    pub list: String,
    pub entries: Vec<String>,
}

/// What taking a rule back out of its file's text comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TakenOut {
    /// The file's new text, and what the person should know beyond it (a
    /// CLI that holds the rule in memory until it restarts).
    Removed {
        text: String,
        note: Option<&'static str>,
    },
    /// None of its entries is there any more as written (changed or
    /// removed by hand): the file is left alone.
    Gone,
    /// The file is not what its CLI writes (`"is not JSON (…)"`): left
    /// alone, for the person to mend by hand.
    Unreadable(String),
}

/// A non-empty list of non-empty strings at `key`.
pub(crate) fn strings_at(v: &Value, key: &str) -> Option<Vec<String>> {
    let items = v.get(key)?.as_array()?;
    let out: Option<Vec<String>> = items
        .iter()
        .map(|i| i.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
        .collect();
    out.filter(|o| !o.is_empty())
}

pub(crate) fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)?.as_str()
}
