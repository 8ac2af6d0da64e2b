//! The words that every format is made of: which agent, what kind of
//! question, why it closed, and one option of a dialog. The report, the
//! API's views and answers from afar all speak of them.

use serde::{Deserialize, Serialize};

wire_enum! {
    /// The coding agent that reported.
    Cli {
        ClaudeCode = "claude-code",
        Codex = "codex",
        Opencode = "opencode",
        Hermes = "hermes",
        Copilot = "copilot",
        Gemini = "gemini",
    }
}

impl Cli {
    /// The product's own name, as a person reads it ("Claude Code is asking").
    pub fn display_name(self) -> &'static str {
        self.describe().name
    }

    /// Who asks, in the words the page and the phone show: "Claude Code is
    /// asking", "Codex needs your permission", "OpenCode asked in a reply".
    pub fn asking(self, kind: Kind) -> String {
        let name = self.display_name();
        match kind {
            Kind::Dialog => format!("{name} is asking"),
            Kind::Permission => format!("{name} needs your permission"),
            Kind::Reply => format!("{name} asked in a reply"),
        }
    }
}

wire_enum! {
    /// What kind of question is open.
    Kind { Dialog = "dialog", Permission = "permission", Reply = "reply" }
}

impl Kind {
    /// Dialogs block the agent until answered, so they are worth a phone
    /// notification; a reply ending with a question is only listed.
    pub fn notifies(self) -> bool {
        matches!(self, Kind::Dialog | Kind::Permission)
    }
}

wire_enum! {
    /// Why a question closed.
    CloseReason {
        Answered = "answered",
        PromptSubmitted = "prompt_submitted",
        ToolRan = "tool_ran",
        RoundEnd = "round_end",
        Interrupted = "interrupted",
        SessionEnd = "session_end",
        Superseded = "superseded",
        Dismissed = "dismissed",
    }
}

/// One choice offered by a dialog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionOption {
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}
