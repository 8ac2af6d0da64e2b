//! Answers from afar on this machine: the relay that receives them, checks
//! each before anything else and types a reply into its pane, the waiters
//! that take a decision or choices for the dialog on their screen, and the
//! one road an answer takes from a waiter to the agent.
//!
//! * [`relay`]: the detached relay (`__relay`): one WebSocket per task, every
//!   answer admitted (`needs_you_trust::admission`), replies typed, screens sealed.
//! * `waiters`: the private link between the relay and the hooks, plugins and
//!   clients that wait for a decision from afar.
//! * `handover`: the one road of an answer once a waiter has it: the CLI's
//!   own form, its lasting rule recorded, handed to the agent.
//! * `taker`: what one CLI supplies to that road: its words, its rules'
//!   place, its hand-over.
//! * `waiting_hook`: the hook that waits while its dialog is on screen
//!   (Claude Code's `PermissionRequest`) for that dialog's answer.
//! * `awaiting`: `__await`, a plugin's wait for its dialog's answer.
//! * [`codex_client`]: the second client of a Codex task's app-server, which
//!   lists its approvals and answers them through the protocol.
//! * `answered_there`: a waiting hook's dialog answered in its terminal, from
//!   its transcript.
//! * `granted`: the lasting rules this machine wrote for answers from afar,
//!   and taking one back.

pub(crate) mod answered_there;
pub(crate) mod awaiting;
pub mod codex_client;
pub(crate) mod granted;
pub(crate) mod handover;
pub mod relay;
pub(crate) mod taker;
pub(crate) mod waiters;
pub(crate) mod waiting_hook;
