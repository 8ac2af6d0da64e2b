//! Why an answer from afar is refused, wherever it is: by the Worker before
//! it queues one, by the agent's machine before it types a key or takes a
//! decision. Each refusal has a stable code that the Worker answers with,
//! the relay reports and the tests match (never the prose), and a message
//! for the person.

use crate::kinds::Kind;

/// Why an answer is refused: each with a stable code that the Worker
/// answers with, the relay reports, and tests match (never the prose).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The question closed, or its task is gone.
    Closed,
    /// A dialog or permission its agent takes only in its terminal (why).
    AnswerInTerminal(Kind, String),
    /// A reply that cannot be typed from afar (why).
    NotAnswerable(String),
    /// The body does not fit the question (why).
    WrongAnswer(String),
    /// Made for another request than the question's.
    Changed,
    /// A text the agent would run as a command, or empty (why).
    RefusedAnswer(&'static str),
    /// On the agent's machine: the session's open question there is not the
    /// one answered (another `seq` or digest: a report it did not make, or
    /// one it has moved on from).
    NotThisRequest,
    /// On the agent's machine: this answer was handed over once already.
    Spent,
    /// A lasting choice the question (or, on the agent's machine, the
    /// dialog there) does not offer.
    NotOffered,
    /// On the agent's machine: no statement signed by a device of the
    /// owner came with it (an older page or command line signs none).
    Unsigned,
    /// On the agent's machine: it was logged in without the owner key's
    /// fingerprint, so nothing from afar can be checked there.
    NotPinned,
    /// On the agent's machine: its signature does not hold, or its
    /// statement cannot be read or is not of this owner.
    BadSignature,
    /// On the agent's machine: signed by a key that is not the owner's the
    /// machine was logged in under.
    UnknownDevice,
    /// On the agent's machine: signed by a device that the owner's newest
    /// device list this machine has seen leaves out.
    RevokedDevice,
    /// On the agent's machine: the owner's newest device list it has seen
    /// is past its life, so a revocation since may have been kept from it.
    StaleDeviceList,
    /// On the agent's machine: its statement is past its expiry, or claims
    /// a life no statement has.
    Expired,
    /// An answer whose words are in the clear for a question whose words
    /// are sealed, or sealed for one whose words are not.
    WordsInTheClear,
    /// On the agent's machine: the answer's sealed words do not open there,
    /// or are not the answer its statement says.
    Unopened,
}

impl Refusal {
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::Closed => "closed",
            Refusal::AnswerInTerminal(..) => "answer_in_terminal",
            Refusal::NotAnswerable(_) => "not_answerable",
            Refusal::WrongAnswer(_) => "wrong_answer",
            Refusal::Changed => "changed",
            Refusal::RefusedAnswer(_) => "refused_answer",
            Refusal::NotThisRequest => "not_this_request",
            Refusal::Spent => "spent",
            Refusal::NotOffered => "not_offered",
            Refusal::Unsigned | Refusal::BadSignature => "bad_signature",
            Refusal::NotPinned => "not_pinned",
            Refusal::UnknownDevice => "unknown_device",
            Refusal::RevokedDevice => "revoked_device",
            Refusal::StaleDeviceList => "stale_device_list",
            Refusal::Expired => "expired",
            Refusal::WordsInTheClear => "words_in_the_clear",
            Refusal::Unopened => "unopened",
        }
    }

    /// The HTTP status the Worker answers it with.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::RefusedAnswer(_) | Refusal::WordsInTheClear => 400,
            _ => 409,
        }
    }

    /// For a person.
    pub fn message(&self) -> String {
        match self {
            Refusal::Closed => "that question is closed already".into(),
            Refusal::AnswerInTerminal(kind, why) => {
                format!("this {kind} cannot be answered from afar: {why}; answer it there")
            }
            Refusal::NotAnswerable(why) => {
                format!("this reply cannot be answered from afar: {why}; answer it there")
            }
            Refusal::WrongAnswer(why) => why.clone(),
            Refusal::Changed => {
                "this dialog is not the one the answer was made for any more: look again".into()
            }
            Refusal::RefusedAnswer(why) => (*why).to_owned(),
            Refusal::NotThisRequest => {
                "the agent's machine is not waiting on that request: it did not report it, or it has moved on".into()
            }
            Refusal::Spent => "this answer reached the agent's machine once already, and is taken once at most: if the agent did not take it, answer again".into(),
            Refusal::NotOffered => {
                "this permission does not offer that choice: allow once, deny, or one of its own lasting choices".into()
            }
            Refusal::Unsigned => {
                "the answer is not signed by a device of the owner, and the agent's machine takes no other: upgrade the page (reload it) or the command line that sent it".into()
            }
            Refusal::NotPinned => {
                "the agent's machine was logged in without your owner key's fingerprint, so it takes no answer from afar: log in there again with the line `needs-you pair` prints".into()
            }
            Refusal::BadSignature => {
                "the answer's signature does not hold: it was changed on its way, or made up".into()
            }
            Refusal::UnknownDevice => {
                "the answer is signed by a key the agent's machine does not know as its owner's, nor as a device its owner paired to answer".into()
            }
            Refusal::RevokedDevice => {
                "the device that signed the answer was revoked by its owner".into()
            }
            Refusal::StaleDeviceList => {
                "the newest list of your devices the agent's machine has seen is out of date (a newer one may have been kept from it): run any `needs-you` command on your own machine, which signs it anew, then answer again".into()
            }
            Refusal::Expired => {
                "the answer, or its device's certificate, is out of date (or the device's clock is far off): answer again, or pair the device again".into()
            }
            Refusal::WordsInTheClear => {
                "an answer seals its words when its question's words are sealed, and only then: reload the page, or upgrade the command line that sent it".into()
            }
            Refusal::Unopened => {
                "the answer's sealed words do not open on the agent's machine, or are not the answer that was signed: its content key may be older than the device's (run `needs-you run` there again)".into()
            }
        }
    }
}
