//! The live list: the messages on the socket that the page (and
//! `needs-you ls --watch`) holds to its owner's list, and the one rule that
//! says what changed between two lists.
//!
//! The server sends the whole list once a socket opens ([`ToPage::List`]),
//! then only what changed ([`ToPage::Changes`]), each with the list's
//! revision. Changes name the revision they start `from`: a reader whose
//! list is not at that revision missed something, and reads the list once.
//! The reader sends only whether its page is looking ([`FromPage::Looking`]),
//! which is its presence.

use serde::{Deserialize, Serialize};

use crate::api::{Listed, NeedsYou, Task};

/// A message from the server to a reader of the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToPage {
    /// The whole list, as `GET /v1/needs-you` answers.
    List { revision: i64, list: NeedsYou },
    /// What changed since revision `from`.
    Changes {
        revision: i64,
        from: i64,
        #[serde(flatten)]
        changes: Changes,
    },
    /// The device was revoked or the owner token replaced: the socket
    /// closes ([`CLOSE_SIGNED_OUT`]) and the reader must not open another
    /// with it. Said before the close, which a client may hear late.
    SignedOut,
}

impl ToPage {
    pub fn to_frame(&self) -> String {
        serde_json::to_string(self).expect("a live message always serializes")
    }
}

/// What changed in a list: the questions new or changed, the ones gone, the
/// order of all that are listed now (when it moved), and the tasks (all of
/// them, when any changed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Changes {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<Listed>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gone: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Vec<Task>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub more: Option<u32>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        *self == Changes::default()
    }

    /// `list` with these changes made: what the reader shows.
    pub fn apply(self, list: &mut NeedsYou) {
        let Changes {
            questions,
            gone,
            order,
            tasks,
            more,
        } = self;
        list.questions
            .retain(|q| !gone.contains(&q.question.question_id));
        for changed in questions {
            match list
                .questions
                .iter_mut()
                .find(|q| q.question.question_id == changed.question.question_id)
            {
                Some(q) => *q = changed,
                None => list.questions.push(changed),
            }
        }
        if let Some(order) = order {
            let at = |q: &Listed| order.iter().position(|id| *id == q.question.question_id);
            list.questions.sort_by_key(|q| at(q).unwrap_or(usize::MAX));
        }
        if let Some(tasks) = tasks {
            list.tasks = tasks;
        }
        if let Some(more) = more {
            list.more = more;
        }
    }
}

/// What changed from `old` to `new`: applied to `old`, it gives `new`.
pub fn changes(old: &NeedsYou, new: &NeedsYou) -> Changes {
    let id = |q: &Listed| q.question.question_id.clone();
    let questions = new
        .questions
        .iter()
        .filter(|q| !old.questions.contains(q))
        .cloned()
        .collect();
    let gone = old
        .questions
        .iter()
        .filter(|o| !new.questions.iter().any(|q| id(q) == id(o)))
        .map(id)
        .collect();
    // The order is sent only when what stays moved or a question came:
    // applying the changes appends a new one, which is rarely its place.
    let kept: Vec<String> = old
        .questions
        .iter()
        .map(id)
        .filter(|o| new.questions.iter().any(|q| id(q) == *o))
        .collect();
    let now: Vec<String> = new.questions.iter().map(id).collect();
    let order = (kept != now).then_some(now);
    Changes {
        questions,
        gone,
        order,
        tasks: (old.tasks != new.tasks).then(|| new.tasks.clone()),
        more: (old.more != new.more).then_some(new.more),
    }
}

/// The list's ETag at `revision` in `minute` (since the epoch): it changes
/// with every change to the list, and every minute, so that ages and
/// expiries move on in a quiet list.
pub fn etag(revision: i64, minute: i64) -> String {
    format!("\"r{revision}-m{minute}\"")
}

/// The revision an [`etag`] carries: a reader of the list lines a read up
/// with the live list's revisions by it.
pub fn etag_revision(etag: &str) -> Option<i64> {
    etag.strip_prefix("\"r")?.split_once("-m")?.0.parse().ok()
}

/// A message from a reader of the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromPage {
    /// Whether the page is open, visible and focused: while one is, the
    /// owner's notifications make no sound. Said again at least every
    /// [`LOOKING_EVERY_S`] while it is.
    Looking { looking: bool },
}

/// How often a looking page says so again on its socket: its keep-alive.
pub const LOOKING_EVERY_S: u32 = 50;

/// How long a presence said on the socket lasts if not said again (or its
/// socket closed first, which ends it at once).
pub const LOOKING_FOR_S: u32 = 75;

/// The close code of a socket whose device was revoked or whose owner token
/// was replaced: the reader must not reconnect with it.
pub const CLOSE_SIGNED_OUT: u16 = 4401;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listed(id: &str, text: &str) -> Listed {
        serde_json::from_value(json!({
            "question_id": id, "task_id": "tsk_1", "task_name": "deploy", "session": "s1",
            "cli": "claude-code", "kind": "reply", "text": text, "options": [],
            "opened_at": 1, "notified_at": null, "who": "Claude Code", "answer": null
        }))
        .unwrap()
    }

    fn list(questions: Vec<Listed>) -> NeedsYou {
        NeedsYou {
            questions,
            more: 0,
            tasks: vec![],
        }
    }

    #[test]
    fn nothing_changed_is_empty() {
        let a = list(vec![listed("q1", "a?"), listed("q2", "b?")]);
        assert!(changes(&a, &a.clone()).is_empty());
    }

    #[test]
    fn a_new_question_comes_with_its_place() {
        let old = list(vec![listed("q1", "a?")]);
        let new = list(vec![listed("q2", "b?"), listed("q1", "a?")]);
        let c = changes(&old, &new);
        assert_eq!(c.questions, vec![listed("q2", "b?")]);
        assert!(c.gone.is_empty());
        assert_eq!(c.order, Some(vec!["q2".to_owned(), "q1".to_owned()]));
        let mut shown = old;
        c.apply(&mut shown);
        assert_eq!(shown, new);
    }

    #[test]
    fn a_closed_question_is_gone_and_the_order_stays_unsaid() {
        let old = list(vec![listed("q2", "b?"), listed("q1", "a?")]);
        let new = list(vec![listed("q1", "a?")]);
        let c = changes(&old, &new);
        assert_eq!(c.gone, vec!["q2".to_owned()]);
        assert_eq!(c.order, None);
        assert!(c.questions.is_empty());
        let mut shown = old;
        c.apply(&mut shown);
        assert_eq!(shown, new);
    }

    #[test]
    fn a_changed_question_is_sent_whole_and_replaces_its_old_self() {
        let old = list(vec![listed("q2", "b?"), listed("q1", "a?")]);
        let new = list(vec![listed("q2", "b, changed?"), listed("q1", "a?")]);
        let c = changes(&old, &new);
        assert_eq!(c.questions, vec![listed("q2", "b, changed?")]);
        assert_eq!(c.order, None);
        let mut shown = old;
        c.apply(&mut shown);
        assert_eq!(shown, new);
    }

    #[test]
    fn tasks_and_more_are_sent_only_when_they_changed() {
        let old = list(vec![]);
        let mut new = list(vec![]);
        new.more = 3;
        let c = changes(&old, &new);
        assert_eq!((c.more, c.tasks.is_none()), (Some(3), true));
    }

    #[test]
    fn an_etag_carries_its_revision() {
        assert_eq!(etag(42, 29_000_000), "\"r42-m29000000\"");
        assert_eq!(etag_revision(&etag(42, 29_000_000)), Some(42));
        assert_eq!(etag_revision(&etag(-1, 0)), Some(-1));
        for bad in ["", "\"r-m1\"", "r42-m1", "\"rx-m1\"", "\"r42\""] {
            assert_eq!(etag_revision(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_wire_form_is_tagged_and_flat() {
        let msg = ToPage::Changes {
            revision: 7,
            from: 6,
            changes: Changes {
                gone: vec!["q1".into()],
                ..Changes::default()
            },
        };
        assert_eq!(
            serde_json::to_value(&msg).unwrap(),
            json!({"type": "changes", "revision": 7, "from": 6, "gone": ["q1"]})
        );
        let back: ToPage = serde_json::from_str(&msg.to_frame()).unwrap();
        assert_eq!(back, msg);
        assert_eq!(ToPage::SignedOut.to_frame(), r#"{"type":"signed_out"}"#);
        let looking: FromPage =
            serde_json::from_str(r#"{"type":"looking","looking":true}"#).unwrap();
        assert_eq!(looking, FromPage::Looking { looking: true });
    }
}
