//! What needs-you trusts, and why: the checks an agent's machine makes of
//! an answer from afar before it types a word or takes a decision, and the
//! cryptography of the owner's keys, with no I/O. The reporter (the agent's
//! machine) and the `needs-you` command line (the owner's, and a paired
//! device's) both stand on it; the formats themselves are
//! [`needs_you_core::signed`] and [`needs_you_core::sealed`], which the
//! Worker and the page read too.
//!
//! * [`verify`]: whose signature an envelope carries and whether it counts:
//!   the owner's key, a device it certified, the newest device list.
//! * [`admission`]: whether an answer is the owner's, for this machine's own
//!   open question, from what the machine knows, passed in.
//! * [`passkey`]: a passkey's assertion over a statement: the person,
//!   verified, on the page's pinned origin.
//! * [`pairing`]: the proof of a new device's keys under the pairing link's
//!   secret.
//! * [`signing`]: a key that signs statements, certificates and lists.
//! * [`sealing`]: the content key, wrapped to each device, and the words
//!   sealed and opened under it.
//! * `testing`: what the unit tests share.

pub mod admission;
pub mod pairing;
pub mod passkey;
pub mod sealing;
pub mod signing;
#[cfg(test)]
mod testing;
pub mod verify;
