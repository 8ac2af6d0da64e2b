//! The HTTP API's views: the JSON that the Worker writes and the command line
//! (and, in JavaScript, the page) reads. Each shape is written here once;
//! `docs/api.md` shows them with examples.
//!
//! * [`Question`]: one question, as the list and the webhook show it;
//!   [`Listed`] adds who asks and its latest answer, in the list.
//! * [`Task`]: a live task and whether it waits.
//! * [`Answer`]: an answer's state on its way to the agent, in the list;
//!   [`AnswerStatus`]: the same, followed by its id.
//! * [`NeedsYou`]: `GET /v1/needs-you`, the whole list.
//! * [`History`]: `GET /v1/history`, every question with its answers and
//!   rules, [`Past`] each.
//! * [`Channel`], [`TestResult`]: an owner's channels, and a test push.
//! * What a creation answers, once: [`NewOwner`], [`NewTask`], [`Pairing`],
//!   [`NewDevice`], [`Queued`], [`NewToken`].
//!
//! * `access`: who may do what, and what a creation answers; `channels`: an owner's channels.

use serde::{Deserialize, Serialize};

use crate::afar::{why_not, Afar, DialogQuestion};
use crate::lasting::{Offer, Scope};
use crate::report::{Cli, CloseReason, Kind, QuestionOption, Terminal};

mod access;
mod channels;

pub use access::*;
pub use channels::*;

/// One question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub question_id: String,
    pub task_id: String,
    /// Its task's name; empty when it is sealed ([`Question::task_sealed_name`]).
    pub task_name: String,
    /// Its task's name as the command line that started the task sealed it
    /// ([`crate::sealed::field::TASK`], scope the task's id), for the
    /// devices to open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_sealed_name: Option<String>,
    pub session: String,
    pub cli: Cli,
    pub kind: Kind,
    pub text: String,
    pub options: Vec<QuestionOption>,
    pub opened_at: i64,
    pub notified_at: Option<i64>,
    /// The device whose page was looking when it rang, so that the ring made
    /// no sound: a quiet ring is never an invisible one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quieted_by: Option<String>,
    pub closed_at: Option<i64>,
    pub close_reason: Option<CloseReason>,
    /// Where its agent runs, as its reporter said (none from older reporters).
    #[serde(default)]
    pub terminal: Option<Terminal>,
    /// A reply whose terminal an answer can be typed into from afar.
    #[serde(default)]
    pub answerable: bool,
    /// What it can be answered with from afar: `text`, `decision`,
    /// `choices`, or null (answer it in the terminal, [`Question::why_not`]).
    #[serde(default)]
    pub answer_from_afar: Option<Afar>,
    /// Why it cannot be answered from afar, in one sentence; null when it can.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// A dialog's questions, as asked (beside the flat `text` and `options`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<DialogQuestion>,
    /// For a decision or choices: the digest of the request, which an answer
    /// sends back so that it lands on this very request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
    /// The `seq` of the agent's machine's report that opened it as it is
    /// now: a signed answer names it, and the machine takes the answer only
    /// for its own open of that `seq` ([`crate::signed`]).
    #[serde(default)]
    pub open_seq: u64,
    /// Whether its pane can be shown (Show terminal): it is in tmux, its task
    /// was not started without it, and, in the list, the reader may see
    /// terminals.
    #[serde(default)]
    pub screen: bool,
    /// Whether its words are sealed ([`crate::words`]): its text, options,
    /// dialog questions and folder are empty here, and a device opens them
    /// from `GET /v1/questions/{id}/request` before it shows it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sealed: bool,
    /// For a permission that takes a decision: what it offers, allow once
    /// and deny first, then the lasting choices its CLI suggests
    /// ([`crate::lasting`]); an answer's `decision` is one of their ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Offer>,
}

impl Question {
    /// Fills in [`Question::answer_from_afar`] and [`Question::why_not`]
    /// from what its reporter said it can take (`takes`): a reply in tmux
    /// takes a text, a dialog or permission what its machine takes, and the
    /// rest say why not.
    pub fn settle_afar(&mut self, takes: Option<Afar>) {
        let afar = match self.kind {
            Kind::Reply if self.answerable => Some(Afar::Text),
            Kind::Reply => None,
            _ => takes.filter(|t| t.answers(self.kind) && self.digest.is_some()),
        };
        self.answer_from_afar = afar;
        let lasting = std::mem::take(&mut self.decisions)
            .into_iter()
            .filter(|o| o.lasting);
        if afar == Some(Afar::Decision) {
            self.decisions = Offer::once().into_iter().chain(lasting).collect();
        }
        self.why_not = match (afar, self.kind, &self.terminal) {
            (Some(_), _, _) => None,
            (None, Kind::Reply, None) => Some(
                "answer it in the agent's terminal: its reporter did not say where it runs".into(),
            ),
            (None, kind, _) => Some(why_not(self.cli, kind).to_owned()),
        };
    }
}

/// A question in the "Needs you" list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listed {
    #[serde(flatten)]
    pub question: Question,
    /// Who asks, in the words every screen shows: [`Cli::asking`].
    pub who: String,
    /// Its latest answer, if it has one.
    pub answer: Option<Answer>,
}

wire_enum! {
    /// Where an answer is: stored, on the agent's machine, typed (a text) or
    /// taken by the agent (a decision, choices), or not, and why.
    AnswerState {
        Queued = "queued",
        Delivered = "delivered",
        Typed = "typed",
        Taken = "taken",
        Failed = "failed",
    }
}

impl AnswerState {
    /// Still on its way: a second answer to the question waits for it.
    pub fn on_its_way(self) -> bool {
        matches!(self, AnswerState::Queued | AnswerState::Delivered)
    }
}

/// An answer, as the list shows it with its question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    pub answer_id: String,
    pub state: AnswerState,
    /// Why it failed, for a person.
    pub reason: Option<String>,
    /// Why it failed, for programs: a [`crate::afar::Refusal`]'s code, or
    /// `closed`, `revoked` (its device), `rotated` (its owner token),
    /// `replaced` (by a newer answer), `taken_back`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    /// What was answered, for a person: the text, `allow`, `deny`, or the
    /// choices ([`crate::afar::AnswerBody::summary`]).
    pub text: String,
    pub updated_at: i64,
    /// When it was sent, in the history (`GET /v1/history`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<i64>,
    /// Its form: `text`, `decision`, `choices`.
    #[serde(default = "text_form")]
    pub form: Afar,
    /// Who answered: a device's name, or "the owner".
    #[serde(default, alias = "answered_by")]
    pub by: Option<String>,
    /// Its words sealed by the device that made it
    /// ([`crate::sealed::field::ANSWER`], scope the question's id), for a
    /// question whose words are sealed: `text` is then only a decision's
    /// word, or empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<String>,
}

/// One question of the history: as the list shows it, with every answer it
/// had, oldest first, and the lasting rules those answers granted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Past {
    #[serde(flatten)]
    pub question: Question,
    /// Who asked, in the words every screen shows: [`Cli::asking`].
    pub who: String,
    pub answers: Vec<Answer>,
    pub rules: Vec<Rule>,
}

/// `GET /v1/history`: the owner's questions, open and closed, newest first,
/// one page; `next` is the `before` of the page after it, null after the
/// last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct History {
    pub questions: Vec<Past>,
    pub next: Option<String>,
}

fn text_form() -> Afar {
    Afar::Text
}

/// An answer followed by its id (`GET /v1/answers/{id}`), also once its
/// question has closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnswerStatus {
    pub answer_id: String,
    pub question_id: String,
    pub state: AnswerState,
    pub reason: Option<String>,
    /// As [`Answer::reason_code`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<String>,
    pub text: String,
    pub created_at: i64,
    pub updated_at: i64,
    #[serde(default = "text_form")]
    pub form: Afar,
    #[serde(default, alias = "answered_by")]
    pub by: Option<String>,
    /// As [`Answer::sealed`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed: Option<String>,
}

wire_enum! {
    /// A live task waits while it has an open question.
    TaskState { Waiting = "waiting", Running = "running" }
}

/// The most characters of a task's name, in the clear or before it is
/// sealed.
pub const MAX_TASK_NAME_CHARS: usize = 100;

/// A live task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub task_id: String,
    /// Its name; empty when it is sealed ([`Task::sealed_name`]).
    pub name: String,
    /// Its name as the command line that started it sealed it
    /// ([`crate::sealed::field::TASK`], scope its id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_name: Option<String>,
    pub state: TaskState,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub last_report_at: Option<i64>,
    /// The agent that reported last, if any did.
    pub cli: Option<Cli>,
    /// That agent's name ("Claude Code").
    #[serde(default)]
    pub agent: Option<String>,
    /// Until when its questions ring nobody (ms), if it is muted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub muted_until: Option<i64>,
    /// The lasting rules granted from afar on it, oldest first.
    #[serde(default)]
    pub rules: Vec<Rule>,
}

wire_enum! {
    /// Where a rule granted from afar is.
    RuleState {
        /// In force, where it was written (or, for a session's, in the
        /// agent's memory until the session ends).
        Granted = "granted",
        /// Asked to be taken back: the task's relay removes it when its
        /// machine is connected.
        Revoking = "revoking",
        /// Taken back: removed from the file it was written to.
        Revoked = "revoked",
        /// No longer there as it was written: changed or removed by hand,
        /// and so left alone.
        Gone = "gone",
    }
}

impl Rule {
    /// With its scope in words.
    pub fn worded(mut self) -> Rule {
        self.place = self.scope.place().to_owned();
        self.lasts = self.scope.lasts().to_owned();
        self
    }
}

/// `GET /v1/rules`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    pub rules: Vec<Rule>,
}

/// A lasting rule granted from afar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rule {
    pub rule_id: String,
    pub task_id: String,
    pub question_id: String,
    /// The answer that granted it: what a signed taking back names
    /// ([`crate::signed::Revoking`]).
    #[serde(default)]
    pub answer_id: String,
    pub cli: Cli,
    /// The machine it was granted on, as its terminal said.
    pub host: Option<String>,
    /// What it allows from now on (`Bash(npm test *)`); for a rule granted
    /// on a sealed question, its [`crate::words::RuleWords`] sealed, and
    /// [`Rule::sealed_scope`] set.
    pub rule: String,
    /// The choice as it was shown.
    pub label: String,
    /// Where it is kept.
    pub scope: Scope,
    /// The same in words: where it is written, and how long it lasts
    /// ([`Scope::place`], [`Scope::lasts`]).
    #[serde(default)]
    pub place: String,
    #[serde(default)]
    pub lasts: String,
    /// The scope its sealed words open in (its choice's id), when they are
    /// sealed; its `label` is empty then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_scope: Option<String>,
    /// Who granted it: a device's name, or "the owner".
    pub granted_by: String,
    pub granted_at: i64,
    pub state: RuleState,
    /// What the relay said when it took it back (or could not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `GET /v1/needs-you`: the newest open questions, newest first, and the
/// live tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeedsYou {
    pub questions: Vec<Listed>,
    /// Open questions beyond the list's cap, left out (the oldest).
    #[serde(default)]
    pub more: u32,
    pub tasks: Vec<Task>,
}

/// `GET /v1/tasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tasks {
    pub tasks: Vec<Task>,
}

/// `POST /v1/questions/{id}/answers`: queued, with what will be typed or
/// handed to the agent ([`crate::afar::AnswerBody::summary`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queued {
    pub answer_id: String,
    pub question_id: String,
    pub state: AnswerState,
    pub text: String,
    #[serde(default = "text_form")]
    pub form: Afar,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listed_question_is_one_flat_object() {
        let v = json!({"question_id": "q_1", "task_id": "tsk_1", "task_name": "deploy",
            "session": "s", "cli": "codex", "kind": "reply", "text": "Go on?", "options": [],
            "opened_at": 1, "notified_at": null, "closed_at": null, "close_reason": null,
            "terminal": {"kind": "tmux", "host": "box", "cwd": "/w", "target": "a:0.0"},
            "answerable": true, "answer_from_afar": "text", "open_seq": 9, "screen": true,
            "who": "Codex asked in a reply",
            "answer": {"answer_id": "ans_1", "state": "typed", "reason": null, "text": "yes",
                       "updated_at": 2, "form": "text", "by": "Ana's phone"}});
        let listed: Listed = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(listed.answer.as_ref().unwrap().state, AnswerState::Typed);
        assert_eq!(serde_json::to_value(&listed).unwrap(), v);
    }

    #[test]
    fn what_a_question_takes_from_afar_and_why_not() {
        let mut q: Question = serde_json::from_value(json!({"question_id": "q", "task_id": "t",
            "task_name": "n", "session": "s", "cli": "codex", "kind": "permission", "text": "Run?",
            "options": [], "opened_at": 1, "notified_at": null, "closed_at": null,
            "close_reason": null}))
        .unwrap();
        q.settle_afar(None);
        assert_eq!(q.answer_from_afar, None);
        assert!(q
            .why_not
            .as_deref()
            .unwrap()
            .starts_with("Codex was not started with `needs-you run`"));
        q.cli = Cli::ClaudeCode;
        q.settle_afar(Some(Afar::Decision));
        assert_eq!(
            q.answer_from_afar, None,
            "no digest, nothing to bind an answer to"
        );
        q.digest = Some("d".repeat(64));
        q.settle_afar(Some(Afar::Decision));
        assert_eq!(
            (q.answer_from_afar, q.why_not.as_deref()),
            (Some(Afar::Decision), None)
        );
        q.settle_afar(Some(Afar::Choices));
        assert_eq!(
            q.answer_from_afar, None,
            "choices do not answer a permission"
        );
        q.kind = Kind::Reply;
        q.answerable = true;
        q.settle_afar(None);
        assert_eq!(q.answer_from_afar, Some(Afar::Text));
    }

    #[test]
    fn a_task_reads_its_state_and_agent() {
        let t: Task = serde_json::from_value(json!({"task_id": "t", "name": "n",
            "state": "waiting", "created_at": 1, "expires_at": null, "last_report_at": null,
            "cli": "claude-code"}))
        .unwrap();
        assert_eq!(
            (t.state, t.cli),
            (TaskState::Waiting, Some(Cli::ClaudeCode))
        );
        assert!(serde_json::from_value::<Task>(json!({"state": "asleep"})).is_err());
    }

    #[test]
    fn rights_are_a_set_in_their_listed_order() {
        let r: Rights = serde_json::from_value(json!(["pair", "tasks", "pair"])).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), json!(["tasks", "pair"]));
        assert_eq!(r.to_list(), "tasks,pair");
        assert_eq!(
            Rights::from_list("answer,flying,tasks").to_list(),
            "tasks,answer"
        );
        let narrow = Rights::all().and(&Rights::from_list("tasks"));
        assert!(narrow.has(Right::Tasks) && !narrow.has(Right::Answer));
        assert_eq!(Rights::from_list("").to_list(), "");
        assert_eq!(Rights::all().bits(), 0b1111);
        assert!(
            !Rights::from_bits(0b111).has(Right::Screen),
            "devices paired before the screen right do not have it"
        );
        assert_eq!(Rights::from_bits(0b101 | 1 << 20).to_list(), "tasks,pair");
        assert_eq!(Rights::from_bits(r.bits()), r);
        assert!(serde_json::from_value::<Rights>(json!(["root"])).is_err());
    }

    #[test]
    fn a_channel_is_its_kind_settings_and_outcomes() {
        let put = json!({"kind": "ntfy", "url": "https://ntfy.sh/t", "priority": 5,
                         "click": null, "has_token": true, "words": false});
        let c: Channel = serde_json::from_value(put.clone()).unwrap();
        assert_eq!(c.settings.kind(), ChannelKind::Ntfy);
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            put,
            "no outcomes: none shown"
        );
        let listed = json!({"kind": "webhook", "url": "https://x.example/h", "has_secret": true,
            "words": true, "last_success_at": 5, "last_failure_at": null, "last_error": null});
        let c: Channel = serde_json::from_value(listed.clone()).unwrap();
        assert_eq!(c.outcome.as_ref().unwrap().last_success_at, Some(5));
        assert_eq!(serde_json::to_value(&c).unwrap(), listed);
        let never = json!({"kind": "webhook", "url": "https://x.example/h", "has_secret": true,
            "words": false, "last_success_at": null, "last_failure_at": null, "last_error": null});
        let c: Channel = serde_json::from_value(never.clone()).unwrap();
        assert_eq!(serde_json::to_value(&c).unwrap(), never, "nulls stay");
    }
}
