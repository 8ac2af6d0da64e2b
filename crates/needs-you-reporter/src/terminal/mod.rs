//! Which terminal the agent runs in, recorded when a question opens: so that
//! every card says where to go (host, folder, tmux `session:window.pane`),
//! and so that the relay can later check, before every keystroke, that an
//! answer goes into that very terminal.
//!
//! One module per terminal kind that answers can be typed into: [`tmux`]
//! now; zellij, WezTerm or kitty would sit beside it, each giving a [`Pane`]
//! it can find again, check and type into.
//!
//! * [`foreground`]: whether the agent that asked is the program a typed line reaches.
//! * [`tmux`]: a tmux pane, found again, checked and typed into.

pub mod foreground;
pub mod tmux;

use needs_you_core::{Terminal, TerminalKind};
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// A pane that answers can be typed into, as recorded at the open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Pane {
    Tmux(tmux::TmuxPane),
}

/// What the open report says, and the pane to record beside it.
pub struct Here {
    pub terminal: Terminal,
    pub pane: Option<Pane>,
}

/// The machine's name (empty when unknown): for the card, and the name of a
/// device that `needs-you login` pairs.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

/// Where this hook's agent runs. `cwd` is the folder the CLI named in its
/// event, else ours. Cheap when not in tmux (one small file read and two
/// environment reads); in
/// tmux, a walk up `/proc` and, once per pane, one `tmux display-message`.
pub fn here(cwd: Option<&str>, state_dir: &std::path::Path) -> Here {
    let cwd = cwd.map(str::to_owned).unwrap_or_else(|| {
        std::env::current_dir()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let host = host_name();
    match tmux::this_pane(state_dir) {
        Some(p) => Here {
            terminal: Terminal {
                kind: TerminalKind::Tmux,
                host,
                cwd,
                target: Some(p.target.clone()),
                messages: false,
            },
            pane: Some(Pane::Tmux(p)),
        },
        None => Here {
            terminal: Terminal {
                kind: TerminalKind::Terminal,
                host,
                cwd,
                target: None,
                messages: false,
            },
            pane: None,
        },
    }
}

/// Why an answer may not be typed into the pane now, if it may not.
pub fn check(pane: &Pane) -> Result<(), Error> {
    match pane {
        Pane::Tmux(p) => tmux::check(p),
    }
}

/// The pane's screen now, if it still runs the agent (Show terminal).
pub fn capture(pane: &Pane) -> Result<needs_you_core::screen::Screen, Error> {
    match pane {
        Pane::Tmux(p) => tmux::capture(p),
    }
}

/// Types one line, then Enter on its own a second later (a single chunk
/// with Enter in it is taken for a paste and not sent). Before the Enter,
/// `still_wanted` (the question is still the one answered) and the pane are
/// checked again.
pub fn type_line(
    pane: &Pane,
    line: &str,
    still_wanted: impl Fn() -> Result<(), Error>,
) -> Result<(), Error> {
    match pane {
        Pane::Tmux(p) => {
            tmux::send_text(p, line)?;
            std::thread::sleep(ENTER_AFTER);
            still_wanted()
                .and_then(|()| tmux::check(p))
                .map_err(|e| Error::Terminal(format!("{e} (the text was typed; Enter was not)")))?;
            tmux::send_enter(p)
        }
    }
}

/// The pause between the text and its Enter.
pub const ENTER_AFTER: std::time::Duration = std::time::Duration::from_secs(1);
