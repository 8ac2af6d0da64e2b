//! What a notifier's alarm does when it fires: reads its question, its
//! owner's channels and every past attempt, asks the delivery rules
//! ([`crate::delivery`]) what to do, does it, and asks again, until the rules
//! say to wait or stop. The attempts themselves are
//! [`crate::channels::attempt`]'s.

use futures_util::future::join_all;
use worker::{Env, Result};

use crate::channels::attempt::{attempt, Outcome};
use crate::config::Settings;
use crate::delivery::{next_step, Event, Snapshot, Step};
use crate::ids::now_ms;
use crate::store;

/// Follows the delivery rules for one question until they say to wait or stop.
/// Returns when to run again, or `None` when done.
pub async fn deliver(env: &Env, settings: &Settings, question_id: &str) -> Result<Option<f64>> {
    let Some(read) = store::alarm_read(env, question_id).await? else {
        return Ok(None);
    };
    let mut configs = read.channels;
    let mut snap = Snapshot {
        question: read.question,
        channels: configs.iter().map(|c| c.kind.clone()).collect(),
        attempts: read.attempts,
        looking_until: read.looking_until,
        looking_device: read.looking_device,
    };
    // Who quieted the step's sends, if anyone: the list says so.
    let mut quieted: Option<String> = None;
    loop {
        let now = now_ms();
        match next_step(&snap, &settings.timing, now) {
            Step::Done => return Ok(None),
            Step::WakeAt(t) => return Ok(Some(t)),
            Step::MarkNotified => {
                store::mark_notified(env, question_id, now, quieted.as_deref()).await?;
                crate::live::changed(env, &snap.question.owner_id).await;
            }
            Step::Send(sends) => {
                // Said once for this step's sends: someone is looking, or not.
                quieted = crate::delivery::quieted_by(&snap, now).map(str::to_owned);
                snap.question.quiet = quieted.is_some();
                snap.question.quieted_by.clone_from(&quieted);
                // Side by side: one slow channel (a push service that takes
                // its 10 s) delays no other.
                let tries = sends.iter().map(|s| {
                    let row = &configs[s.channel];
                    attempt(env, settings, &snap, &row.kind, &row.config, s.event, now)
                });
                let outcomes = join_all(tries).await;
                let done = now_ms();
                let mut gone = Vec::new();
                let first_ring = snap.question.notified_at.is_none();
                let mut rang = false;
                for (s, outcome) in sends.iter().zip(outcomes) {
                    rang |= s.event == Event::Open && outcome == Outcome::Delivered;
                    let kind = configs[s.channel].kind.clone();
                    snap.record(&kind, s.event, outcome == Outcome::Delivered, done);
                    if outcome == Outcome::Gone {
                        gone.push(s.channel);
                    }
                }
                // A dropped subscription is no channel any more.
                gone.sort_unstable_by(|a, b| b.cmp(a));
                for channel in gone {
                    configs.remove(channel);
                    snap.channels.remove(channel);
                }
                // The first ring is on the card (when, and whose page quieted it).
                if rang && first_ring {
                    crate::live::changed(env, &snap.question.owner_id).await;
                }
            }
        }
        // The question is read again after every step: a send can take
        // seconds, and the question may have closed meanwhile. Nothing is then
        // sent for it but its close, which carries why it closed.
        match store::question(env, question_id).await? {
            Some(q) => snap.question = q,
            None => return Ok(None),
        }
    }
}
