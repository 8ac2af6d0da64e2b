//! The pane a device asks to see (Show terminal): checked as before typing
//! (the question open here, of this task, the pane still the agent's), read
//! at most every [`SCREEN_EVERY`], and sealed under the owner's content key
//! for the open question as this machine recorded it. A machine that
//! seals nothing, or whose person ruled screens out, shows none.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use needs_you_core::relay_messages::{ScreenAsk, ScreenReply};
use needs_you_core::screen::Screen;
use needs_you_core::sealed::{field, open_scope};
use needs_you_trust::sealing::{self, ContentKey};

use super::admit::{no_screen, recorded_pane};
use crate::error::Error;
use crate::send::sealed_report;
use crate::state::StateDir;
use crate::terminal;

/// The shortest time between two reads of one pane: a reader asking faster
/// is sent the last screen, so that no reader can make tmux work harder.
pub const SCREEN_EVERY: Duration = Duration::from_millis(200);

/// The last screen read of each session's pane, and when.
#[derive(Default)]
pub(super) struct Screens {
    last: HashMap<String, (Instant, Screen)>,
}

impl Screens {
    /// The pane of the session's open question, as asked: checked as before
    /// typing (the question open here, of this task, the pane still the
    /// agent's), and read at most every [`SCREEN_EVERY`].
    /// The screen goes sealed under the owner's content key, as the screen
    /// of the session's open question as this machine recorded it (its
    /// session and `seq`, never an id the server gives): the server carries
    /// it and cannot read it, nor pass it off as another question's. Its
    /// digest is keyed under the same key: a server cannot test a guess of
    /// a screen against it, only see that the pane changed.
    pub(super) fn reply(
        &mut self,
        dir: &StateDir,
        task: &str,
        owner: Option<&str>,
        ask: &ScreenAsk,
    ) -> ScreenReply {
        let request_id = ask.request_id.clone();
        let shown = self
            .read(dir, task, &ask.session)
            .and_then(|(screen, seq)| {
                let (owner, key) = screen_key(owner)?;
                let plain = screen.digest();
                // Named as a screen's, apart from any request's; as short as
                // the plain one, which is all a reader's "unchanged" needs.
                let mut digest = key.keyed(&owner, &format!("screen {plain}"));
                digest.truncate(plain.len());
                if ask.seen.as_deref() == Some(digest.as_str()) {
                    return Ok((digest, None));
                }
                let scope = open_scope(&ask.session, seq);
                let json = serde_json::to_vec(&screen).unwrap_or_default();
                let sealed = sealing::seal(&key, &owner, &scope, field::SCREEN, &json)
                    .map_err(|e| Error::Setup(format!("cannot seal the screen: {e}")))?;
                Ok((digest, Some(sealed)))
            });
        match shown {
            Ok((digest, sealed)) => ScreenReply {
                request_id,
                sealed,
                digest: Some(digest),
                refused: None,
                code: None,
            },
            Err(why) => ScreenReply {
                request_id,
                refused: Some(why.to_string()),
                code: Some(why.code().to_owned()),
                ..ScreenReply::default()
            },
        }
    }

    /// The pane's screen, and the `seq` of the open question it is of.
    fn read(&mut self, dir: &StateDir, task: &str, session: &str) -> Result<(Screen, u64), Error> {
        if no_screen() {
            return Err(Error::Terminal(
                "this agent was started with --no-screen".into(),
            ));
        }
        let pane = recorded_pane(dir, task, session)
            .map_err(|f| Error::Terminal(f.reason))?
            .pane;
        let seq = dir
            .open_question(session)
            .map_err(|e| Error::State(format!("cannot read the state directory: {e}")))?
            .ok_or_else(|| Error::Terminal("the question is no longer open in the agent".into()))?
            .seq;
        if let Some((at, screen)) = self.last.get(session) {
            if at.elapsed() < SCREEN_EVERY {
                return Ok((screen.clone(), seq));
            }
        }
        let screen = terminal::capture(&pane)?;
        self.last.retain(|_, (at, _)| at.elapsed() < SCREEN_EVERY);
        self.last
            .insert(session.to_owned(), (Instant::now(), screen.clone()));
        Ok((screen, seq))
    }
}

/// The owner and the newest version of the content key, which seal a
/// screen and key its digest; none on a machine that seals nothing.
fn screen_key(owner: Option<&str>) -> Result<(String, ContentKey), Error> {
    let unsealable = |why: &str| {
        Error::Setup(format!(
            "this machine {why}, so it shows no screen: log it in with the line `needs-you pair` prints, and start the agent with `needs-you run`"
        ))
    };
    let owner = owner.ok_or_else(|| unsealable("pins no owner key"))?;
    let keys = sealed_report::held_keys()?.ok_or_else(|| unsealable("holds no content key"))?;
    let key = keys
        .newest()
        .ok_or_else(|| unsealable("holds no content key"))?;
    Ok((owner.to_owned(), key.clone()))
}
