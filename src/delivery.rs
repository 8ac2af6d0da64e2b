//! The delivery rules: which channel still needs which event of a question,
//! when to try a failed one again, and when to stop. Pure code over a
//! [`Snapshot`] of the question and its delivery records; the notifier's
//! alarm ([`crate::notifier`]) reads the snapshot, asks [`next_step`] what to
//! do, does it, and asks again.
//!
//! The rules:
//!
//! * An open question is notified only if it is a dialog or a permission, its
//!   task is live, and it has been open for the delay. Each channel gets the
//!   `open` event until one attempt succeeds.
//! * Once any channel has the `open`, the question is marked notified.
//! * A closed question sends nothing new: only the channels that got the
//!   `open` are sent the `close`, so they can withdraw it.
//! * A failed attempt is tried again after a backoff that starts at the retry
//!   base and doubles, [`MAX_ATTEMPTS`] times at most per channel and event.
//!   A success is never repeated.
//! * A question of a muted task rings when the mute ends, if it is still open
//!   then; never before ([`Snapshot`]'s question, `task_muted_until`).
//! * When someone of the owner is looking at the page (open, visible and
//!   focused on some device) as the alarm fires, the notification goes out as
//!   ever but makes no sound ([`quiet`]): the card is on their screen already.
//!   Nothing waits for presence, so a page that died without saying so costs
//!   a silent notification at worst, never a late or missing one.

use serde::{Deserialize, Deserializer};

use crate::question::Question;

/// Deliveries of one event to one channel are tried this many times at most.
pub const MAX_ATTEMPTS: u32 = 6;

/// Which side of a question a delivery tells about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The dialog is still open after the delay: notify.
    Open,
    /// A notified question closed: update or withdraw the notification.
    Close,
}

impl Event {
    pub fn as_str(self) -> &'static str {
        match self {
            Event::Open => "open",
            Event::Close => "close",
        }
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match String::deserialize(d)?.as_str() {
            "open" => Ok(Event::Open),
            "close" => Ok(Event::Close),
            other => Err(serde::de::Error::custom(format!("unknown event {other:?}"))),
        }
    }
}

/// The past attempts of one event on one channel.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempts {
    pub channel: String,
    pub event: Event,
    pub tried: u32,
    pub ok: bool,
    /// When the last attempt was made (ms).
    pub last_at: f64,
}

/// What the rules look at: the question, its owner's channels by name, and
/// every channel's past attempts.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub question: Question,
    pub channels: Vec<String>,
    pub attempts: Vec<Attempts>,
    /// Until when some device of the owner that may answer has its page
    /// open, visible and focused (ms), if any has, and its name.
    pub looking_until: Option<f64>,
    pub looking_device: Option<String>,
}

/// Whether a delivery made at `now` should make no sound: someone is looking.
pub fn quiet(s: &Snapshot, now: f64) -> bool {
    s.looking_until.is_some_and(|t| t > now)
}

/// The device whose presence makes a delivery at `now` quiet, by name: the
/// list says so, so that a quiet ring is never an invisible one.
pub fn quieted_by(s: &Snapshot, now: f64) -> Option<&str> {
    quiet(s, now).then(|| s.looking_device.as_deref().unwrap_or("a device"))
}

/// The timings, from the Worker's settings.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// How long a dialog must stay open before its owner is notified.
    pub delay_ms: f64,
    /// The first retry's delay; it doubles with each attempt.
    pub retry_base_ms: f64,
}

/// One delivery to make: `event` to the channel `snapshot.channels[channel]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Send {
    pub channel: usize,
    pub event: Event,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Make these deliveries now, side by side.
    Send(Vec<Send>),
    /// A channel has the `open`: record that the owner was notified.
    MarkNotified,
    /// Nothing to do before this time (ms): come back then.
    WakeAt(f64),
    /// Nothing left to do for this question.
    Done,
}

impl Snapshot {
    fn attempts(&self, channel: &str, event: Event) -> Option<&Attempts> {
        self.attempts
            .iter()
            .find(|a| a.channel == channel && a.event == event)
    }

    /// How many times `event` was tried on `channel`.
    pub fn tried(&self, channel: &str, event: Event) -> u32 {
        self.attempts(channel, event).map_or(0, |a| a.tried)
    }

    fn delivered(&self, channel: &str, event: Event) -> bool {
        self.attempts(channel, event).is_some_and(|a| a.ok)
    }

    /// Adds one attempt made at `now`, as the store records it.
    pub fn record(&mut self, channel: &str, event: Event, ok: bool, now: f64) {
        match self
            .attempts
            .iter_mut()
            .find(|a| a.channel == channel && a.event == event)
        {
            Some(a) => {
                a.tried += 1;
                a.ok |= ok;
                a.last_at = now;
            }
            None => self.attempts.push(Attempts {
                channel: channel.to_owned(),
                event,
                tried: 1,
                ok,
                last_at: now,
            }),
        }
    }
}

/// When a channel whose last attempt failed may be tried again.
pub fn retry_at(a: &Attempts, timing: &Timing) -> f64 {
    let doublings = a.tried.saturating_sub(1).min(16);
    a.last_at + timing.retry_base_ms * f64::from(1u32 << doublings)
}

/// The next thing to do for the question in `s` at `now`.
pub fn next_step(s: &Snapshot, timing: &Timing, now: f64) -> Step {
    let q = &s.question;
    if q.closed_at.is_some() {
        // Only the channels that were told of the open hear of the close.
        return first_due(s, Event::Close, timing, now, |ch| {
            s.delivered(ch, Event::Open)
        });
    }
    if !q.kind.notifies() || q.task_expired(now) {
        return Step::Done;
    }
    let due = q.opened_at as f64 + timing.delay_ms;
    if now < due {
        return Step::WakeAt(due);
    }
    if let Some(until) = q.task_muted_until.map(|t| t as f64).filter(|t| *t > now) {
        return Step::WakeAt(until);
    }
    let notified = s.channels.iter().any(|ch| s.delivered(ch, Event::Open));
    if notified && q.notified_at.is_none() {
        return Step::MarkNotified;
    }
    first_due(s, Event::Open, timing, now, |_| true)
}

/// Every wanted channel that still needs `event` and may be tried now; else
/// the earliest retry, else done.
fn first_due(
    s: &Snapshot,
    event: Event,
    timing: &Timing,
    now: f64,
    wanted: impl Fn(&str) -> bool,
) -> Step {
    let mut wake: Option<f64> = None;
    let mut due = Vec::new();
    for (i, ch) in s.channels.iter().enumerate() {
        if !wanted(ch) {
            continue;
        }
        match s.attempts(ch, event) {
            None => due.push(Send { channel: i, event }),
            Some(a) if a.ok || a.tried >= MAX_ATTEMPTS => continue,
            Some(a) => {
                let at = retry_at(a, timing);
                if now >= at {
                    due.push(Send { channel: i, event });
                } else {
                    wake = Some(wake.map_or(at, |w| w.min(at)));
                }
            }
        }
    }
    if !due.is_empty() {
        return Step::Send(due);
    }
    wake.map_or(Step::Done, Step::WakeAt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use needs_you_core::{Cli, CloseReason, Kind};

    const T: Timing = Timing {
        delay_ms: 15_000.0,
        retry_base_ms: 2_000.0,
    };
    const OPENED: f64 = 1_000_000.0;
    const DUE: f64 = OPENED + 15_000.0;

    fn question(kind: Kind) -> Question {
        Question::open(
            "q_1",
            "deploy",
            Cli::ClaudeCode,
            kind,
            "Which region?",
            OPENED as i64,
        )
    }

    fn snap(kind: Kind) -> Snapshot {
        Snapshot {
            question: question(kind),
            channels: vec!["ntfy".into(), "webhook".into()],
            attempts: vec![],
            looking_until: None,
            looking_device: None,
        }
    }

    #[test]
    fn a_muted_task_rings_when_its_mute_ends_if_still_open() {
        let mut s = snap(Kind::Dialog);
        s.question.task_muted_until = Some((DUE + 60_000.0) as i64);
        assert_eq!(next_step(&s, &T, DUE), Step::WakeAt(DUE + 60_000.0));
        assert_eq!(
            next_step(&s, &T, DUE + 59_999.0),
            Step::WakeAt(DUE + 60_000.0)
        );
        assert!(matches!(next_step(&s, &T, DUE + 60_000.0), Step::Send(_)));
        // A mute that ended before the delay changes nothing.
        s.question.task_muted_until = Some((OPENED + 1.0) as i64);
        assert!(matches!(next_step(&s, &T, DUE), Step::Send(_)));
        // Closed during the mute: nothing to withdraw, nothing sent.
        s.question.task_muted_until = Some((DUE + 60_000.0) as i64);
        close(&mut s, DUE + 1.0);
        assert_eq!(next_step(&s, &T, DUE + 2.0), Step::Done);
    }

    #[test]
    fn someone_looking_makes_the_ring_quiet_and_never_later() {
        let mut s = snap(Kind::Permission);
        s.looking_until = Some(DUE + 10_000.0);
        // The same step at the same time as with nobody looking.
        let looking = next_step(&s, &T, DUE);
        s.looking_until = None;
        assert_eq!(looking, next_step(&s, &T, DUE));
        assert!(matches!(looking, Step::Send(ref v) if v.len() == 2));
        s.looking_until = Some(DUE + 10_000.0);
        assert!(quiet(&s, DUE));
        assert!(
            !quiet(&s, DUE + 10_000.0),
            "a presence not renewed runs out"
        );
        s.looking_until = None;
        assert!(!quiet(&s, DUE));
        assert_eq!(quieted_by(&s, DUE), None);
        s.looking_until = Some(DUE + 1.0);
        s.looking_device = Some("Chrome on Android".into());
        assert_eq!(quieted_by(&s, DUE), Some("Chrome on Android"));
    }

    fn close(s: &mut Snapshot, at: f64) {
        s.question.closed_at = Some(at as i64);
        s.question.close_reason = Some(CloseReason::Answered);
    }

    fn send(channel: usize, event: Event) -> Step {
        Step::Send(vec![Send { channel, event }])
    }

    fn send_all(channels: &[usize], event: Event) -> Step {
        Step::Send(
            channels
                .iter()
                .map(|&channel| Send { channel, event })
                .collect(),
        )
    }

    #[test]
    fn an_open_dialog_waits_for_the_delay_then_goes_to_every_channel() {
        let mut s = snap(Kind::Dialog);
        assert_eq!(next_step(&s, &T, OPENED), Step::WakeAt(DUE));
        assert_eq!(next_step(&s, &T, DUE - 1.0), Step::WakeAt(DUE));
        assert_eq!(
            next_step(&s, &T, DUE),
            send_all(&[0, 1], Event::Open),
            "every channel at once: a slow one holds up no other"
        );
        s.record("ntfy", Event::Open, true, DUE);
        s.record("webhook", Event::Open, false, DUE);
        assert_eq!(next_step(&s, &T, DUE), Step::MarkNotified);
        s.question.notified_at = Some(DUE as i64);
        assert_eq!(next_step(&s, &T, DUE), Step::WakeAt(DUE + 2_000.0));
        assert_eq!(next_step(&s, &T, DUE + 2_000.0), send(1, Event::Open));
        s.record("webhook", Event::Open, true, DUE + 2_000.0);
        assert_eq!(next_step(&s, &T, DUE + 2_000.0), Step::Done);
    }

    #[test]
    fn replies_and_expired_tasks_are_never_notified() {
        assert_eq!(next_step(&snap(Kind::Reply), &T, DUE), Step::Done);
        let mut s = snap(Kind::Permission);
        s.question.task_expires_at = Some(DUE as i64);
        assert_eq!(next_step(&s, &T, DUE), Step::Done);
        s.question.task_expires_at = Some(DUE as i64 + 1);
        assert_eq!(next_step(&s, &T, DUE), send_all(&[0, 1], Event::Open));
    }

    #[test]
    fn a_question_closed_before_anyone_was_told_sends_nothing() {
        let mut s = snap(Kind::Dialog);
        close(&mut s, OPENED + 5.0);
        assert_eq!(next_step(&s, &T, DUE), Step::Done);
    }

    #[test]
    fn a_failed_channel_backs_off_doubling_and_stops_after_the_last_attempt() {
        let mut s = snap(Kind::Dialog);
        s.channels.truncate(1);
        let mut now = DUE;
        let mut waits = Vec::new();
        for _ in 0..MAX_ATTEMPTS {
            assert_eq!(next_step(&s, &T, now), send(0, Event::Open));
            s.record("ntfy", Event::Open, false, now);
            match next_step(&s, &T, now) {
                Step::WakeAt(at) => {
                    waits.push(at - now);
                    now = at;
                }
                Step::Done => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(waits, [2_000.0, 4_000.0, 8_000.0, 16_000.0, 32_000.0]);
        assert_eq!(next_step(&s, &T, now + 1e9), Step::Done, "given up");
    }

    #[test]
    fn a_retry_of_one_channel_does_not_hold_the_others() {
        let mut s = snap(Kind::Dialog);
        s.record("ntfy", Event::Open, false, DUE);
        assert_eq!(next_step(&s, &T, DUE), send(1, Event::Open));
        s.record("webhook", Event::Open, true, DUE);
        assert_eq!(next_step(&s, &T, DUE), Step::MarkNotified);
        s.question.notified_at = Some(DUE as i64);
        assert_eq!(next_step(&s, &T, DUE), Step::WakeAt(DUE + 2_000.0));
    }

    #[test]
    fn a_close_goes_only_to_the_channels_that_had_the_open() {
        let mut s = snap(Kind::Dialog);
        s.record("ntfy", Event::Open, false, DUE);
        s.record("webhook", Event::Open, true, DUE);
        s.question.notified_at = Some(DUE as i64);
        close(&mut s, DUE + 100.0);
        assert_eq!(next_step(&s, &T, DUE + 100.0), send(1, Event::Close));
        s.record("webhook", Event::Close, true, DUE + 100.0);
        assert_eq!(
            next_step(&s, &T, DUE + 1e9),
            Step::Done,
            "the pending open retry is dropped: nothing is opened after a close"
        );
    }

    #[test]
    fn a_failed_close_is_retried_like_an_open() {
        let mut s = snap(Kind::Permission);
        s.channels.truncate(1);
        s.record("ntfy", Event::Open, true, DUE);
        s.question.notified_at = Some(DUE as i64);
        close(&mut s, DUE + 10.0);
        s.record("ntfy", Event::Close, false, DUE + 10.0);
        assert_eq!(next_step(&s, &T, DUE + 10.0), Step::WakeAt(DUE + 2_010.0));
        assert_eq!(next_step(&s, &T, DUE + 2_010.0), send(0, Event::Close));
    }

    #[test]
    fn an_open_delivered_but_not_marked_is_marked_before_anything_else() {
        // An earlier pass delivered the open and then failed to record the mark.
        let mut s = snap(Kind::Dialog);
        s.record("ntfy", Event::Open, true, DUE);
        s.record("webhook", Event::Open, true, DUE);
        assert_eq!(next_step(&s, &T, DUE + 50.0), Step::MarkNotified);
    }

    #[test]
    fn an_owner_without_channels_is_done_at_once() {
        let mut s = snap(Kind::Dialog);
        s.channels.clear();
        assert_eq!(next_step(&s, &T, DUE), Step::Done);
    }
}
