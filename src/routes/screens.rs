//! Show terminal: `GET /v1/questions/{id}/screen?seen=DIGEST`, the screen of
//! the pane an open question came from, asked of its task's relay at each
//! request and passed on as it comes (nothing of it is stored or logged).
//!
//! Seeing a screen is a right of its own ([`Right::Screen`]): a pane can hold
//! whatever the agent printed. Only an open question of the reader's owner,
//! from a tmux pane, of a live task started with screens allowed; the relay
//! then checks the pane as it checks before typing, and sends the screen
//! sealed under the owner's content key (`needs_you_core::sealed`), which
//! the Worker cannot open: it bounds its size and passes it on; the page or
//! command line that asked opens it, then bounds and cleans it
//! (`needs_you_core::screen::Screen::checked`) before it draws it.

use serde::Serialize;
use worker::{Env, Request};

use needs_you_core::api::Right;
use needs_you_core::screen::MAX_BYTES;
use needs_you_core::sealed::{max_sealed_chars, SealedText};

use crate::ids::now_ms;
use crate::json::{ok, ApiError, ApiResult};
use crate::limits::{self, Rate};
use crate::relay::{self, Asked};
use crate::{auth, store};

/// A screen sealed under the owner's content key, or its digest alone when
/// the reader has it already.
#[derive(Serialize)]
struct Shown {
    question_id: String,
    digest: String,
    /// Absent: unchanged since the digest the reader sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    sealed: Option<String>,
}

/// Whether `sealed` is a sealed text no longer than a sealed screen can be:
/// the Worker cannot open it, only bound it.
fn is_sealed_screen(sealed: &str) -> bool {
    sealed.len() <= max_sealed_chars(MAX_BYTES) && SealedText::parse(sealed).is_some()
}

fn is_digest(s: &str) -> bool {
    s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

pub async fn get(req: Request, env: &Env, question_id: &str) -> ApiResult {
    let person = auth::person(&req, env).await?;
    person.may(Right::Screen)?;
    limits::within_rate(env, Rate::Screens, &person.credential_hash).await?;
    // A digest is 16 hex characters; anything else is no screen the reader has.
    let seen = needs_you_core::query::param(&req.inner().url(), "seen")
        .filter(|v| is_digest(v))
        .unwrap_or_default();
    let q = store::question(env, question_id)
        .await?
        .filter(|q| q.owner_id == person.owner_id)
        .ok_or_else(ApiError::not_found)?;
    if q.closed_at.is_some() || q.task_revoked || q.task_expired(now_ms()) {
        return Err(ApiError::new(
            409,
            "closed",
            "that question is closed: its terminal is no longer shown",
        ));
    }
    if !q.screen {
        let in_tmux = q
            .terminal
            .as_ref()
            .is_some_and(|t| t.kind == needs_you_core::TerminalKind::Tmux);
        let why = if in_tmux {
            (
                "no_screen",
                "its task was started with --no-screen: its terminal is never shown",
            )
        } else {
            (
                "not_in_tmux",
                "it was not asked in a tmux pane: there is no terminal to show",
            )
        };
        return Err(ApiError::new(409, why.0, why.1));
    }
    match relay::screen(env, &q.task_id, &q.session, &seen).await? {
        Asked::Reply(reply) => match (reply.refused, reply.digest) {
            // The Worker cannot read the screen: it passes on a sealed one in
            // form, with the relay's digest; "unchanged" only for the
            // reader's own digest. The reader opens, checks and draws it.
            (None, Some(digest))
                if is_digest(&digest)
                    && match &reply.sealed {
                        Some(sealed) => is_sealed_screen(sealed),
                        None => digest == seen,
                    } =>
            {
                ok(
                    200,
                    &Shown {
                        question_id: question_id.to_owned(),
                        digest,
                        sealed: reply.sealed,
                    },
                )
            }
            (refused, _) => Err(ApiError::new(
                409,
                "screen_refused",
                refused
                    .map(|r| needs_you_core::text::line(&r).chars().take(300).collect())
                    .unwrap_or_else(|| "the agent's machine sent no screen".to_owned()),
            )
            .because(reply.code)),
        },
        Asked::NoRelay => Err(ApiError::new(
            409,
            "relay_offline",
            "the agent's machine is not connected: it may be asleep or offline",
        )),
        Asked::Outdated => Err(ApiError::new(
            409,
            "relay_outdated",
            "the agent's machine runs an older report-prompt, which cannot show the terminal: update it and restart the agent",
        )),
        Asked::Late => Err(ApiError::new(
            504,
            "relay_timeout",
            "the agent's machine did not send its screen in time",
        )),
    }
}
