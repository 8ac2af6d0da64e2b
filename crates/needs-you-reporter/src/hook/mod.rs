//! Hook mode: read one event, decide, record the state, hand off the request.
//!
//! Every path ends with exit code 0 and nothing on stdout; a failure is one
//! line on stderr. The order matters for cost: closing events while nothing is
//! open for the session stop after one lock and one `exists`, before any
//! environment check or process spawn.
//!
//! * `parent`: whether Codex runs this hook in its shared background server.
//! * `record`: the CLIs' payloads kept for fixtures (`NEEDS_YOU_RECORD_DIR`).
//! * `transcript_reply`: a round's reply read from its transcript, where its event garbles it.
//! * `transcript_tail`: the end of a transcript, searched from its last line back.
//! * `plan`: the plan of a Claude Code plan approval, from its transcript.
//! * `watch`: a dialog's transcript, watched for an end that fires no hook
//!   (`__watch`, a detached helper the hook starts).

pub(crate) mod parent;
pub(crate) mod plan;
pub(crate) mod record;
mod transcript_reply;
pub(crate) mod transcript_tail;
pub(crate) mod watch;

use std::io::Read;
use std::path::PathBuf;

use needs_you_core::classify::{settle, Takeable};
use needs_you_core::{classify, Cli, Decision, Kind, Report};
use serde_json::Value;

use crate::afar::relay;
use crate::afar::taker::Taker;
use crate::clis::{self, Integration};
use crate::error::Error;
use crate::questions::{self, state_error};
use crate::send;
use crate::state::{self, StateDir};
use crate::terminal;

/// The most of stdin we read: hook payloads can carry whole tool outputs.
const MAX_EVENT_BYTES: u64 = 16 * 1024 * 1024;

/// Reads and discards stdin, so the CLI never writes into a closed pipe.
pub fn drain_stdin() {
    let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
}

fn read_event() -> Result<Value, Error> {
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_EVENT_BYTES)
        .read_to_end(&mut buf)
        .map_err(|e| Error::Event(format!("cannot read stdin: {e}")))?;
    drain_stdin();
    if buf.iter().all(u8::is_ascii_whitespace) {
        return Err(Error::Event("no event on stdin".into()));
    }
    serde_json::from_slice(&buf)
        .map_err(|e| Error::Event(format!("stdin is not a JSON event: {e}")))
}

pub fn run(cli: Cli, state_dir: Option<PathBuf>) {
    if cli.describe().hooks_lose_credential {
        adopt_task_vars();
    }
    if let Err(msg) = decide_and_hand_off(clis::of(cli), state_dir) {
        crate::say(msg);
    }
}

/// Takes the task's variables ([`crate::TASK_VARS`]: the credential, the
/// content key's file, the pinned owner, …) from the agent's own environment
/// when the CLI handed its hooks an environment without them
/// ([`needs_you_core::agent::Description::hooks_lose_credential`]), into this
/// process's, which the sender and the relay it starts inherit. Every one of
/// them, not the credential alone: a hook that reported with the credential
/// and without the content key would send the question readable. Naming
/// them in the CLI's list of kept ones would hand them to the model's
/// commands and servers too. Runs before any thread is started.
fn adopt_task_vars() {
    let missing: Vec<&str> = crate::TASK_VARS
        .iter()
        .copied()
        .filter(|name| std::env::var_os(name).is_none_or(|v| v.is_empty()))
        .collect();
    if missing.is_empty() {
        return;
    }
    for (name, value) in parent::agent_env_vars(&missing) {
        std::env::set_var(name, value);
    }
}

/// The one road of a hook event: read as its CLI writes it, decided, and
/// carried out. What is particular to a CLI comes from its part on this
/// machine (`agent`) and its description in the core, never from a branch
/// here.
fn decide_and_hand_off(
    agent: &'static dyn Integration,
    state_dir: Option<PathBuf>,
) -> Result<(), Error> {
    let cli = agent.cli();
    let event = read_event()?;
    record::event(cli, &event);
    let event = transcript_reply::fix(cli, event);
    let classified = classify(cli, &event);
    if let Decision::Ignore { .. } = classified.decision {
        return Ok(());
    }
    let session = classified
        .session
        .ok_or_else(|| Error::Event(format!("the {cli} event has no session id")))?;
    if !agent.reported_here(&event, classified.agent.as_deref())? {
        return Ok(());
    }
    // A run for one prompt and no person: nobody can answer its dialogs,
    // so none is remembered, waited on or reported.
    if classified.decision.asks() && parent::runs_for_one_prompt(cli) {
        return Ok(());
    }
    let dir = StateDir::open(state::resolve(state_dir)).map_err(state_error)?;
    let mut asked = Asked {
        cli,
        session,
        event: &event,
        takeable: classified.takeable,
        // The subagent that asks, once known: the event's own, or, for a
        // prompt that confirms an announced dialog, the announcer's.
        who: classified.agent,
    };
    match classified.decision {
        Decision::Expect { text, .. } => {
            let text = agent.with_more(&event, text);
            let waiting = cli
                .describe()
                .waits(&event)
                .then(|| agent.waiting_hook_taker(&event))
                .flatten();
            asked.expect(&dir, text, waiting)
        }
        open @ Decision::Open { .. } => asked.open(&dir, open, agent.replies_as_messages()),
        Decision::Close { reason } => asked.close(&dir, reason),
        Decision::Ignore { .. } => Ok(()),
    }
}

/// One event's question as the hook has it: whose, and what it takes. What
/// its CLI does in its own way was asked of the CLI's part before.
struct Asked<'a> {
    cli: Cli,
    session: String,
    event: &'a Value,
    takeable: Option<Takeable>,
    who: Option<String>,
}

impl Asked<'_> {
    /// A dialog announced before it is drawn: remembered for the prompt
    /// that follows; where its CLI's hook for it waits while the dialog is
    /// on screen (Claude Code's PermissionRequest), the answer from afar is
    /// waited for there.
    fn expect(
        &self,
        dir: &StateDir,
        text: String,
        waiting: Option<Box<dyn Taker + '_>>,
    ) -> Result<(), Error> {
        dir.record_expect(
            &self.session,
            &text,
            self.takeable.as_ref(),
            self.who.as_deref(),
        )
        .map_err(state_error)?;
        if let (Some(t), Some(taker)) = (&self.takeable, waiting) {
            crate::afar::waiting_hook::take_from_afar(dir, &self.session, t, self.event, taker);
        }
        Ok(())
    }

    /// Opens the question: marked open and its report queued, its
    /// transcript watched where a dialog can end without a hook, and, where
    /// an answer can come from afar, the relay started. A permission is
    /// first settled by what is known here of its session: announced by
    /// Claude Code's PermissionRequest, it takes what that said it takes
    /// (the prompt that follows says nothing of it); a plugin's permission
    /// says it itself. Only a permission reads the session: a reply, which
    /// opens at the end of every round that asks, reads nothing.
    fn open(
        &mut self,
        dir: &StateDir,
        mut decision: Decision,
        replies_as_messages: bool,
    ) -> Result<(), Error> {
        if let Decision::Open {
            kind: Kind::Permission,
            ..
        } = decision
        {
            let known = dir.session_state(&self.session).map_err(state_error)?;
            self.takeable = (self.takeable.take()).or_else(|| known.expected_takeable.clone());
            self.who = self.who.take().or_else(|| known.expected_agent.clone());
            decision = settle(decision, &known);
        }
        // Settled, a permission stays open or is ignored (the prompt of a
        // question dialog that is open already).
        match decision {
            Decision::Open { kind, .. } => open(dir, self, kind, &decision, replies_as_messages),
            _ => Ok(()),
        }
    }

    fn close(&self, dir: &StateDir, reason: needs_you_core::CloseReason) -> Result<(), Error> {
        questions::close_by(
            dir,
            self.cli,
            &self.session,
            reason,
            None,
            self.who.as_deref(),
        )
        .map(drop)
    }
}

/// Opens the question: marked open and its report queued, its transcript
/// watched where a dialog can end without a hook, and, where an answer can
/// come from afar, the relay started.
fn open(
    dir: &StateDir,
    asked: &Asked,
    kind: Kind,
    decision: &Decision,
    replies_as_messages: bool,
) -> Result<(), Error> {
    let (cli, session, event) = (asked.cli, &asked.session, asked.event);
    // Check the set-up before marking anything open: a marker with no
    // server behind it would only make every closing hook slower.
    let target = send::Target::from_env()?;
    let mut here = terminal::here(event.get("cwd").and_then(Value::as_str), dir.path());
    here.terminal.messages = kind == Kind::Reply && replies_as_messages;
    let report = |seq| {
        let mut r = decision.clone().into_report(cli, session.clone(), seq);
        if let Some(Report::Open { terminal, .. }) = &mut r {
            *terminal = Some(here.terminal.clone());
        }
        if let (Some(r), Some(t)) = (&mut r, &asked.takeable) {
            with_request(r, t);
        }
        r
    };
    // A dialog that can end without a hook is watched in its transcript.
    let transcript = kind
        .notifies()
        .then(|| watch::transcript_of(cli, event))
        .flatten();
    let at = transcript
        .as_ref()
        .map(|(path, len)| (*len, path.as_path()));
    let lasting = asked
        .takeable
        .as_ref()
        .map(|t| state::lasting_ids(&t.request))
        .unwrap_or_default();
    let opening = state::Opening {
        kind,
        transcript: at,
        agent: asked.who.as_deref(),
        digest: asked.takeable.as_ref().map(|t| t.takes.digest.as_str()),
        lasting: &lasting,
    };
    questions::open(dir, &target, session, &opening, |seq| {
        report(seq).expect("an open")
    })?;
    if let Some((path, _)) = transcript {
        watch::start(dir, cli, session, &path);
    }
    // A question in a pane: the relay waits for answers to type, and shows
    // the pane when asked (Show terminal). Elsewhere, no pane of an earlier
    // question may stay recorded.
    let Some(pane) = here.pane else {
        relay::forget_pane(dir.path(), session);
        // The relay takes the reply's answer for the client to send.
        if here.terminal.messages {
            relay::ensure_relay(dir.path(), &target)?;
        }
        return Ok(());
    };
    let record = relay::PaneRecord {
        task: relay::task_key(&target),
        pane,
        cli: Some(cli),
    };
    relay::record_pane(dir.path(), session, &record);
    relay::ensure_relay(dir.path(), &target)
}

/// Most characters of an open's own text when it carries its request: the
/// sender puts the card built from the request in its place
/// (`sealed_report`), and until then the two together must fit one body.
const TEXT_BESIDE_REQUEST: usize = 200;

/// An open that takes an answer from afar carries what it takes, its digest
/// and the request itself: the card is built from the request, never from
/// our words, which shrink to a head (and a dialog's questions, which
/// the request holds, are left to it).
fn with_request(report: &mut Report, takeable: &Takeable) {
    if let Report::Open {
        text,
        takes,
        questions,
        request,
        ..
    } = report
    {
        *takes = Some(takeable.takes.clone());
        *request = Some(Box::new(takeable.request.clone()));
        *text = needs_you_core::truncate_chars(text, TEXT_BESIDE_REQUEST);
        questions.clear();
    }
}

/// `report-prompt classify`: the decision as one JSON object on stdout.
pub fn classify_stdin(cli: Cli) -> i32 {
    match read_event() {
        Ok(event) => {
            let out = serde_json::to_string(&classify(cli, &event)).expect("a decision serializes");
            println!("{out}");
            0
        }
        Err(msg) => {
            crate::say(msg);
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_open_with_its_largest_request_still_fits_one_body() {
        let content = "x".repeat(needs_you_core::request::MAX_REQUEST_BYTES - 200);
        let event = json!({"session_id": "s", "hook_event_name": "PermissionRequest",
            "tool_name": "Write", "tool_input": {"file_path": "/w/a", "content": content}});
        let c = classify(Cli::ClaudeCode, &event);
        let takeable = c.takeable.expect("it fits: it takes an answer");
        let Decision::Expect { text, .. } = c.decision else {
            panic!("expected")
        };
        let open = Decision::Open {
            kind: Kind::Permission,
            text,
            options: Vec::new(),
        };
        let mut report = open.into_report(Cli::ClaudeCode, "s".into(), 1).unwrap();
        with_request(&mut report, &takeable);
        let body = serde_json::to_vec(&report).unwrap();
        assert!(
            body.len() <= needs_you_core::report::MAX_BODY_BYTES,
            "{}",
            body.len()
        );
        let parsed = Report::parse(&body).expect("the Worker takes it");
        let Report::Open { request, takes, .. } = parsed else {
            panic!("an open")
        };
        assert_eq!(request.unwrap().input["content"], content.as_str());
        assert_eq!(takes.unwrap().digest, takeable.takes.digest);
    }
}
