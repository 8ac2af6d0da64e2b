//! The relay's protocol: the messages between the Worker's relay object (one
//! per task) and `report-prompt __relay` on the agent's machine, over the
//! WebSocket of `GET /v1/relay`. JSON text frames, each an object whose
//! `type` says what it is. Both ends read and write these types, and nothing
//! else.
//!
//! ```text
//! relay  -> Worker   {"type": "hello"}                      on every connect
//! Worker -> relay    {"type": "answer", answer_id, question_id, session, open_seq, session_seq,
//!                     text | decision (+ message) | choices, digest?, signed?, devices?}
//! relay  -> Worker   {"type": "received", answer_id}
//! relay  -> Worker   {"type": "typed", answer_id}           a text, typed
//! relay  -> Worker   {"type": "taken", answer_id}           a decision or choices, taken by the agent
//! relay  -> Worker   {"type": "failed", answer_id, reason, code?}
//! Worker -> relay    {"type": "screen", request_id, session, seen?}   Show terminal
//! relay  -> Worker   {"type": "screen", request_id, digest?, screen? | refused?}
//! Worker -> relay    {"type": "revoke", rule_id, answer_id, signed, devices?}   take back a lasting rule
//! relay  -> Worker   {"type": "revoked", rule_id, outcome: "removed" | "gone" | "failed", note}
//! ```
//!
//! A `revoke` names the answer that granted the rule, in a statement the
//! owner's device signed: the relay takes back only what its own machine
//! recorded it wrote for that answer, from the file it wrote it to, never a
//! rule or a path the Worker names. It is sent
//! on every `hello` until the relay says how it went.
//!
//! A `screen` asks for the pane of the session's open question: the relay
//! answers with the screen, or with its digest alone when it is still the
//! one the reader has (`seen`), or with why it will not show it. The Worker
//! waits for the answer to pass it on; nothing of it is kept.
//!
//! On a `hello` the Worker sends every answer of the task still on its way
//! whose question is open; never one whose question closed. Every message a
//! relay sends counts against its task's rate: a flood closes the socket
//! ([`CLOSE_FLOOD`]) and writes nothing.
//! A message of a type the reader does not know is skipped, so either end
//! may be newer than the other.

use serde::{Deserialize, Serialize};

use crate::afar::AnswerBody;
use crate::signed::Envelope;

/// The close code of a relay whose task was revoked: stop, do not reconnect.
pub const CLOSE_REVOKED: u16 = 4001;
/// The close code of a relay that a newer connection of its task replaced:
/// one relay per task, the newest; the older stops, as with a revoke.
pub const CLOSE_REPLACED: u16 = 4002;

/// The close code of a relay that sent more messages than its task's rate:
/// it may connect again later (the standard "policy violation").
pub const CLOSE_FLOOD: u16 = 1008;

/// The header in which a relay names what it can do beyond answers, at
/// connect: a relay that does not say [`CAN_SCREEN`] (one from an older
/// reporter, which sent screens in the clear or none) is never asked for a
/// screen.
pub const CAN_HEADER: &str = "x-relay-can";
/// It shows its panes' screens (Show terminal), sealed under the owner's
/// content key.
pub const CAN_SCREEN: &str = "sealed-screen";

/// The longest failure reason the Worker keeps from a relay.
pub const MAX_REASON_CHARS: usize = 300;

/// An answer on its way to the agent's terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub answer_id: String,
    pub question_id: String,
    /// The CLI's session the question belongs to.
    pub session: String,
    /// The `seq` of the report that opened the question: a decision or
    /// choices are taken only while that is the machine's own open question
    /// of the session (a report it did not make has another).
    #[serde(default)]
    pub open_seq: u64,
    /// The session's last report the server applied: the relay types only if
    /// its machine made no newer one.
    pub session_seq: u64,
    /// What to type, or the decision or choices to hand the agent's hook.
    #[serde(flatten)]
    pub body: AnswerBody,
    /// For a decision or choices: the digest of the request they answer,
    /// which the hook that takes them checks against its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The answer's words, sealed by the device that made it, when its
    /// question's are ([`crate::signed::Statement::sealed_hash`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<String>,
    /// The answering device's signed statement, passed on as it came: a
    /// machine logged in under an owner acts on that, never on the fields
    /// above ([`crate::signed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed: Option<Box<Envelope>>,
    /// The owner's newest device list the Worker holds, signed by the
    /// owner's key: the machine keeps the newest it has seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<Box<Envelope>>,
}

/// A reader asks to see the pane of a session's open question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenAsk {
    /// Names the answer, which goes back to this reader only.
    pub request_id: String,
    /// The CLI's session of the question.
    pub session: String,
    /// The digest of the screen the reader shows already, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<String>,
}

/// The relay's answer to a [`ScreenAsk`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ScreenReply {
    pub request_id: String,
    /// The screen's digest ([`crate::screen::Screen::digest`]); none when refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The screen's JSON ([`crate::screen::Screen`]) sealed under the owner's content key
    /// (`s1.…`, [`crate::sealed`]) as the [`crate::sealed::field::SCREEN`] of
    /// the session's open question ([`crate::sealed::open_scope`]); none
    /// when the reader has it already, or when refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<String>,
    /// Why the relay does not show the pane, for a person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// The same, as a stable code for programs: the kind of what failed on
    /// the agent's machine (`terminal`, `state`, `setup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// A lasting rule granted from afar, to be taken back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revocation {
    pub rule_id: String,
    /// The answer that granted it, as the server says.
    pub answer_id: String,
    /// The owner's device's signed [`Revoking`](crate::signed::Revoking):
    /// the machine takes back only the rule it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed: Option<Box<Envelope>>,
    /// The owner's newest device list, as with an [`Answer`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub devices: Option<Box<Envelope>>,
}

wire_enum! {
    /// What the relay did with a rule it was asked to take back.
    RevokeOutcome {
        /// Removed from the file it was written to.
        Removed = "removed",
        /// Not there as it was written (changed or removed by hand): left
        /// alone.
        Gone = "gone",
        /// Not removed, and the rule stays (the file cannot be read or
        /// written; this machine never wrote it): the note says why.
        Failed = "failed",
    }
}

/// The relay's answer to a [`Revocation`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revoked {
    pub rule_id: String,
    pub outcome: RevokeOutcome,
    /// For a person: what was removed from where, or why not.
    pub note: String,
}

/// What the Worker sends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ToRelay {
    Answer(Answer),
    Screen(ScreenAsk),
    Revoke(Revocation),
}

wire_enum! {
    /// Why the relay on the agent's machine did not type or hand on an
    /// answer, where no binding rule refused it ([`crate::afar::Refusal`]):
    /// the stable code of each such failure.
    NotDone {
        /// The question is no longer open on the agent's machine.
        NoLongerOpen = "no_longer_open",
        /// The session now waits on a dialog, which is answered there.
        NowADialog = "now_a_dialog",
        /// The session has moved on since the answer was made.
        MovedOn = "moved_on",
        /// The machine has no record of the question's terminal.
        NoTerminal = "no_terminal",
        /// The terminal is not the agent's as recorded any more.
        TerminalChanged = "terminal_changed",
        /// The CLI's prompt is not shown empty and at rest.
        PromptNotReady = "prompt_not_ready",
        /// Typing stopped half-way: the question closed or the pane changed.
        TypingStopped = "typing_stopped",
        /// The machine's state could not be read.
        StateUnreadable = "state_unreadable",
        /// No hook or plugin waits for it: its dialog was answered in the
        /// terminal, or it changed.
        NoWaiter = "no_waiter",
        /// Handed over, and the agent did not take it.
        NotTaken = "not_taken",
        /// A decision that names no request.
        NoRequest = "no_request",
    }
}

/// What the relay sends. Read through `Frame`, one flat object: serde's
/// own reading of a `type`-tagged enum buffers every frame first, and in the
/// Worker's wasm that reading alone was 17 KB.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", try_from = "Frame")]
pub enum FromRelay {
    /// Connected: send what is on its way.
    Hello,
    /// The agent's machine has the answer.
    Received { answer_id: String },
    /// Typed into the terminal, Enter included.
    Typed { answer_id: String },
    /// A decision or choices handed to the agent, which took them.
    Taken { answer_id: String },
    /// Not typed, and why, for the person; `code` for programs: one of
    /// [`crate::afar::Refusal`]'s, or of [`NotDone`]'s (a relay older than
    /// these codes sent none).
    Failed {
        answer_id: String,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// A pane's screen, asked for.
    Screen(ScreenReply),
    /// A rule taken back, or not.
    Revoked(Revoked),
}

/// Every field any relay message has, each where its `type` says.
#[derive(Deserialize)]
struct Frame {
    #[serde(rename = "type")]
    kind: String,
    answer_id: Option<String>,
    reason: Option<String>,
    code: Option<String>,
    request_id: Option<String>,
    digest: Option<String>,
    sealed: Option<String>,
    refused: Option<String>,
    rule_id: Option<String>,
    outcome: Option<RevokeOutcome>,
    note: Option<String>,
}

impl TryFrom<Frame> for FromRelay {
    type Error = String;

    fn try_from(f: Frame) -> Result<FromRelay, String> {
        let needs = |v: Option<String>, field: &str| v.ok_or(format!("missing field `{field}`"));
        Ok(match f.kind.as_str() {
            "hello" => FromRelay::Hello,
            "received" => FromRelay::Received {
                answer_id: needs(f.answer_id, "answer_id")?,
            },
            "typed" => FromRelay::Typed {
                answer_id: needs(f.answer_id, "answer_id")?,
            },
            "taken" => FromRelay::Taken {
                answer_id: needs(f.answer_id, "answer_id")?,
            },
            "failed" => FromRelay::Failed {
                answer_id: needs(f.answer_id, "answer_id")?,
                reason: needs(f.reason, "reason")?,
                code: f.code,
            },
            "screen" => FromRelay::Screen(ScreenReply {
                request_id: needs(f.request_id, "request_id")?,
                digest: f.digest,
                sealed: f.sealed,
                refused: f.refused,
                code: f.code,
            }),
            "revoked" => FromRelay::Revoked(Revoked {
                rule_id: needs(f.rule_id, "rule_id")?,
                outcome: f.outcome.ok_or("missing field `outcome`")?,
                note: needs(f.note, "note")?,
            }),
            other => return Err(format!("unknown relay message type `{other}`")),
        })
    }
}

impl FromRelay {
    /// One JSON text frame.
    pub fn to_frame(&self) -> String {
        serde_json::to_string(self).expect("relay messages serialize")
    }
}

impl ToRelay {
    /// One JSON text frame.
    pub fn to_frame(&self) -> String {
        serde_json::to_string(self).expect("relay messages serialize")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_are_the_documented_objects() {
        let a = ToRelay::Answer(Answer {
            answer_id: "ans_1".into(),
            question_id: "q_1".into(),
            session: "s".into(),
            open_seq: 1_764_460_800_000_000,
            session_seq: 1_764_460_800_123_000,
            body: AnswerBody::Text { text: "yes".into() },
            digest: None,
            sealed: None,
            signed: None,
            devices: None,
        });
        let v: serde_json::Value = serde_json::from_str(&a.to_frame()).unwrap();
        assert_eq!(
            v,
            json!({"type": "answer", "answer_id": "ans_1", "question_id": "q_1", "session": "s",
                   "open_seq": 1_764_460_800_000_000u64,
                   "session_seq": 1_764_460_800_123_000u64, "text": "yes"})
        );
        assert_eq!(FromRelay::Hello.to_frame(), r#"{"type":"hello"}"#);
        let failed: FromRelay =
            serde_json::from_str(r#"{"type":"failed","answer_id":"a","reason":"gone"}"#).unwrap();
        assert_eq!(
            failed,
            FromRelay::Failed {
                answer_id: "a".into(),
                reason: "gone".into(),
                code: None
            }
        );
        assert!(serde_json::from_str::<FromRelay>(r#"{"type":"shout"}"#).is_err());
        let decide: ToRelay = serde_json::from_value(json!({"type": "answer", "answer_id": "a",
            "question_id": "q", "session": "s", "session_seq": 3, "decision": "deny",
            "message": "no", "digest": "d"}))
        .unwrap();
        let ToRelay::Answer(a) = decide else {
            panic!("an answer")
        };
        assert_eq!(a.digest.as_deref(), Some("d"));
        assert!(matches!(a.body, AnswerBody::Decision { .. }));
        let ask = ToRelay::Screen(ScreenAsk {
            request_id: "r1".into(),
            session: "s".into(),
            seen: None,
        });
        assert_eq!(
            ask.to_frame(),
            r#"{"type":"screen","request_id":"r1","session":"s"}"#
        );
        let reply: FromRelay = serde_json::from_value(
            json!({"type": "screen", "request_id": "r1", "digest": "ab", "sealed": "s1.1.bm9uY2U.Y2lw"}),
        )
        .unwrap();
        let FromRelay::Screen(reply) = reply else {
            panic!("a screen")
        };
        assert_eq!(reply.sealed.as_deref(), Some("s1.1.bm9uY2U.Y2lw"));
    }

    #[test]
    fn every_message_of_the_relay_reads_back_as_it_was_written() {
        let all = [
            FromRelay::Hello,
            FromRelay::Received {
                answer_id: "a".into(),
            },
            FromRelay::Typed {
                answer_id: "a".into(),
            },
            FromRelay::Taken {
                answer_id: "a".into(),
            },
            FromRelay::Failed {
                answer_id: "a".into(),
                reason: "gone".into(),
                code: Some("closed".into()),
            },
            FromRelay::Screen(ScreenReply {
                request_id: "r".into(),
                digest: Some("d".into()),
                sealed: None,
                refused: Some("no".into()),
                code: Some("terminal".into()),
            }),
            FromRelay::Revoked(Revoked {
                rule_id: "rul_1".into(),
                outcome: RevokeOutcome::Gone,
                note: "changed by hand".into(),
            }),
        ];
        for msg in all {
            let back: FromRelay = serde_json::from_str(&msg.to_frame()).unwrap();
            assert_eq!(back, msg);
        }
        let err = serde_json::from_str::<FromRelay>(r#"{"type":"typed"}"#).unwrap_err();
        assert!(err.to_string().contains("answer_id"), "{err}");
    }
}
