//! `report-prompt __await --cli opencode`: a plugin's wait for the answer
//! from afar to the dialog it has on screen.
//!
//! Our OpenCode plugin reports a permission or question as any other event,
//! and starts one of these beside it, with the same event on its stdin. This
//! classifies it as the report did (so the request's digest is made in one
//! place for every CLI), starts the task's relay if none runs, and waits on
//! the relay's socket ([`waiters::wait`]). With an answer, it prints it on
//! stdout as one JSON line (`{"decision": …, "<cli>": <its reply>}`, for
//! OpenCode `"opencode": {"reply": "once" | "reject" | "always",
//! "message"?}`, or `{"choices": …}`), and
//! waits for one more line on stdin: `took` once the plugin handed it to
//! OpenCode, which the relay then reports. The plugin ends it (or closes
//! its stdin) when the dialog is answered in the terminal first.
//!
//! It exits 0 whatever happens, with at most one line on stderr: a plugin's
//! helper never breaks the agent.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use needs_you_core::afar::AnswerBody;
use needs_you_core::classify::{self, classify, Takeable};
use needs_you_core::Cli;
use serde_json::Value;

use crate::afar::handover::{self, Outcome};
use crate::afar::relay;
use crate::afar::taker::{Closing, Taker};
use crate::afar::waiters;
use crate::error::Error;
use crate::send::Target;
use crate::state::{self, StateDir};

pub fn run(cli: Cli, state_dir: Option<PathBuf>) -> i32 {
    if let Err(msg) = wait(cli, state_dir) {
        crate::say(msg);
    }
    0
}

fn wait(cli: Cli, state_dir: Option<PathBuf>) -> Result<(), Error> {
    let mut stdin = std::io::stdin().lock();
    let mut line = String::new();
    stdin
        .read_line(&mut line)
        .map_err(|e| Error::Event(format!("cannot read stdin: {e}")))?;
    let event: Value = serde_json::from_str(&line)
        .map_err(|e| Error::Event(format!("stdin is not a JSON event: {e}")))?;
    let classified = classify(cli, &event);
    let takeable = classified
        .takeable
        .ok_or_else(|| Error::Event("this event takes no answer from afar".into()))?;
    let session = classified
        .session
        .ok_or_else(|| Error::Event(format!("the {cli} event has no session id")))?;
    let target = Target::from_env()?;
    let dir = StateDir::open(state::resolve(state_dir)).map_err(crate::questions::state_error)?;
    relay::ensure_relay(dir.path(), &target)?;
    let task = relay::task_key(&target);
    let socket = waiters::socket_path(dir.path(), &task);
    let Some(answered) = waiters::wait(&socket, &session, &takeable, None) else {
        return Ok(());
    };
    let mut taker = Plugin { cli, stdin };
    match handover::deliver(&dir, &task, &session, Some(&takeable), answered, &mut taker) {
        Outcome::Taken | Outcome::NotTaken => Ok(()),
        Outcome::DoesNotFit => Err(Error::Agent(
            "an answer this permission does not offer".into(),
        )),
        Outcome::NotRecorded(why) | Outcome::NotHanded(why) => Err(why),
    }
}

/// A plugin's part of the road: the answer printed as one JSON line, which
/// the plugin hands to its agent, then says `took` on stdin.
struct Plugin<'a> {
    cli: Cli,
    stdin: std::io::StdinLock<'a>,
}

impl Taker for Plugin<'_> {
    /// A permission's answer carries the CLI's own reply, under the CLI's
    /// name, worked out here from the plugin's request: the plugin maps
    /// nothing itself.
    fn translate(&self, answer: &AnswerBody, takeable: Option<&Takeable>) -> Option<Value> {
        let mut form = serde_json::to_value(answer).ok()?;
        if let (AnswerBody::Decision { .. }, Some(obj)) = (answer, form.as_object_mut()) {
            let reply = classify::plugin_reply(self.cli, answer, &takeable?.request)?;
            obj.insert(self.cli.as_str().into(), reply);
        }
        Some(form)
    }

    /// The folder the CLI runs the plugin in (OpenCode keeps its lasting
    /// choice in its memory: no file is written there).
    fn project(&self) -> Option<PathBuf> {
        std::env::current_dir().ok()
    }

    fn hand_over(&mut self, form: Value) -> Result<bool, Error> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{form}")
            .and_then(|()| out.flush())
            .map_err(|e| Error::Agent(format!("cannot hand the answer to the plugin: {e}")))?;
        drop(out);
        let mut line = String::new();
        Ok(self.stdin.read_line(&mut line).is_ok() && line.trim() == "took")
    }

    fn closing(&self) -> Closing {
        Closing::ByItsEvent
    }
}
