//! What waits for the person: `ls` (and `ls --watch`), `tasks`, and acting
//! on a question: `answer`, `dismiss`, and seeing its terminal: `show`.

use std::io::Write;
use std::time::{Duration, Instant};

use needs_you_core::afar::{Afar, AnswerBody, Verdict};
use needs_you_core::api::{AnswerState, AnswerStatus, NeedsYou, Question, Queued, Task, Tasks};
use needs_you_core::classify::card;
use needs_you_core::screen::Screen;
use needs_you_core::sealed::field::SCREEN;
use needs_you_core::sealed::open_scope;
use needs_you_reporter::client::{Client, Failure, FailureKind};
use needs_you_trust::sealing::{open, SealError};
use serde_json::{json, Value};

use super::compose::{self, Signing};
use super::{cards, logged_in, now_ms, path_part, print_json, trusting};
use crate::content_keys;
use crate::display;
use crate::fail::{exit, Fail, Result};
use crate::keys;
use crate::term;

/// How long `answer` follows its answer before it says where it is.
const FOLLOW_FOR: Duration = Duration::from_secs(15);

/// `ls [--watch] [--json]`.
pub fn ls(watch: bool, json_out: bool) -> Result<i32> {
    let (login, client) = logged_in()?;
    if watch {
        return super::watch::watch_list(&login, &client);
    }
    let list: NeedsYou = client.get("/v1/needs-you")?;
    // Sealed words opened here, and each card that takes a decision or
    // choices built here from its request.
    let questions = cards::Built::new(&login).shown(&client, &list.questions);
    if json_out {
        print_json(&json!({ "questions": questions }));
    } else {
        print!(
            "{}",
            display::questions(&questions, now_ms(), term::width())
        );
    }
    Ok(exit::OK)
}

/// The screen route's answer: the screen sealed under the owner's content
/// key, absent when unchanged.
#[derive(serde::Deserialize)]
struct Shown {
    digest: String,
    sealed: Option<String>,
}

/// How often `show --watch` asks for the pane.
const SHOW_EVERY: Duration = Duration::from_millis(500);
/// How long `show --watch` waits after a failure that may pass.
const SHOW_RETRY: Duration = Duration::from_secs(2);

/// A failure of the screen route that asking again later may mend.
fn passes(f: &Failure) -> bool {
    matches!(f.kind, FailureKind::Unreachable | FailureKind::Server)
        || matches!(
            f.code.as_deref(),
            Some("relay_offline" | "relay_timeout" | "rate_limited")
        )
}

/// `show QUESTION [--watch]`: the pane's screen, in its colours on a
/// terminal (made here from the screen's numbers: nothing the pane printed
/// reaches this terminal as a sequence), as plain text elsewhere.
pub fn show(question: &str, watch: bool) -> Result<i32> {
    let (login, client) = logged_in()?;
    let path = format!("/v1/questions/{}/screen", path_part(question)?);
    // Opened here: the server carries the screen sealed, and cannot read it.
    let no_key = || {
        Fail::new(
            exit::REFUSED,
            "this login holds no content key, so it cannot open a screen: log in with the link `needs-you pair` shows on your own machine",
        )
    };
    let mut keys = None;
    let mut scope: Option<String> = None;
    let colour = term::is_tty();
    let mut digest: Option<String> = None;
    loop {
        // A digest is hex: anything else from a server is not sent back.
        let seen = digest
            .as_deref()
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(|d| format!("?seen={d}"))
            .unwrap_or_default();
        let shown: Shown = match client.get(&format!("{path}{seen}")) {
            Ok(s) => s,
            // The question closed under a watch: its view ends, done.
            Err(f) if watch && digest.is_some() && f.code.as_deref() == Some("closed") => {
                eprintln!("needs-you: the question closed");
                return Ok(exit::OK);
            }
            // What may pass (the machine offline or slow, the rate, the
            // network) is waited out under a watch, as the page does.
            Err(f) if watch && passes(&f) => {
                std::thread::sleep(SHOW_RETRY);
                continue;
            }
            Err(f) => return Err(unknown(question)(f)),
        };
        // Checked here too: what reaches this terminal is made from numbers.
        if let Some(sealed) = shown.sealed {
            let owner = login.owner.as_deref().ok_or_else(no_key)?;
            // Sealed as the screen of the question's session and `seq`, as
            // the agent's machine recorded them, under a version of the
            // content key: both read again once when it does not open (the
            // question was opened anew, or the key turned, since).
            let mut opened = Err(SealError::NotSealed);
            for _ in 0..2 {
                if keys.is_none() {
                    keys = content_keys::on_this_device(&login, &client)?;
                }
                if scope.is_none() {
                    scope = match screen_scope_of(&client, question) {
                        Ok(scope) => Some(scope),
                        // Closed under a watch: its view ends, done.
                        Err(_) if watch && digest.is_some() => {
                            eprintln!("needs-you: the question closed");
                            return Ok(exit::OK);
                        }
                        Err(f) => return Err(f),
                    };
                }
                let held = keys.as_ref().ok_or_else(no_key)?;
                let scope_now = scope.as_deref().unwrap_or_default();
                opened = open(held, owner, scope_now, SCREEN, &sealed);
                if opened.is_ok() {
                    break;
                }
                (keys, scope) = (None, None);
            }
            let opened = opened
                .map_err(|e| Fail::new(exit::REFUSED, format!("the screen did not open: {e}")))?;
            let screen = serde_json::from_slice::<Screen>(&opened)
                .map(Screen::checked)
                .map_err(|_| Fail::new(exit::REFUSED, "the screen opened, but is not a screen"))?;
            let text = if colour {
                screen.to_ansi()
            } else {
                screen.to_plain()
            };
            let clear = if watch && colour { "\x1b[H\x1b[2J" } else { "" };
            let mut out = std::io::stdout().lock();
            if out
                .write_all(format!("{clear}{text}").as_bytes())
                .and_then(|_| out.flush())
                .is_err()
            {
                return Ok(exit::OK);
            }
        }
        if !watch {
            return Ok(exit::OK);
        }
        digest = Some(shown.digest);
        std::thread::sleep(SHOW_EVERY);
    }
}

/// The scope question `question_id`'s screen is sealed in: its session and
/// `seq`, from the list.
fn screen_scope_of(client: &Client, question_id: &str) -> Result<String> {
    let list: NeedsYou = client.get("/v1/needs-you")?;
    list.questions
        .iter()
        .map(|l| &l.question)
        .find(|q| q.question_id == question_id)
        .map(|q| open_scope(&q.session, q.open_seq))
        .ok_or_else(|| Fail::new(exit::REFUSED, "that question is no longer open"))
}

/// `tasks [--json]`.
pub fn tasks(json_out: bool, with_rules: bool) -> Result<i32> {
    let (login, client) = logged_in()?;
    let mut tasks: Tasks = client.get("/v1/tasks")?;
    cards::Built::new(&login).tasks(&client, &mut tasks.tasks);
    if json_out {
        print_json(&tasks);
    } else {
        let now = now_ms();
        print!("{}", display::tasks(&tasks.tasks, now, term::width()));
        if with_rules {
            let mut opener = cards::Built::new(&login);
            let rules: Vec<_> = (tasks.tasks.iter())
                .flat_map(|t| t.rules.clone())
                .map(|r| opener.rule(&client, r))
                .collect();
            print!("\n{}", display::rules(&rules, now));
        }
    }
    Ok(exit::OK)
}

/// `tasks mute TASK --for D` and `tasks unmute TASK` (`seconds` 0): TASK is
/// a live task's id, or its name when one task has it.
pub fn mute(task: &str, seconds: u64) -> Result<i32> {
    let (login, client) = logged_in()?;
    let mut tasks: Tasks = client.get("/v1/tasks")?;
    cards::Built::new(&login).tasks(&client, &mut tasks.tasks);
    let named: Vec<&Task> = tasks.tasks.iter().filter(|t| t.name == task).collect();
    let id = match (
        tasks.tasks.iter().find(|t| t.task_id == task),
        named.as_slice(),
    ) {
        (Some(t), _) => t.task_id.clone(),
        (None, [t]) => t.task_id.clone(),
        (None, []) => {
            return Err(Fail::new(
                exit::REFUSED,
                format!("no live task {task:?}: `needs-you tasks` lists them"),
            ))
        }
        (None, _) => {
            return Err(Fail::new(
                exit::REFUSED,
                format!(
                    "{} live tasks are named {task:?}: give its id (`needs-you tasks --json`)",
                    named.len()
                ),
            ))
        }
    };
    mute_task(&client, &id, seconds)?;
    if seconds == 0 {
        println!("{task}: unmuted.");
    } else {
        println!(
            "{task}: muted for {}; its questions are listed and ring nobody.",
            super::human(seconds)
        );
    }
    Ok(exit::OK)
}

/// `PUT /v1/tasks/{id}/mute`.
pub fn mute_task(client: &Client, task_id: &str, seconds: u64) -> Result<()> {
    client.put::<Value>(
        &format!("/v1/tasks/{}/mute", path_part(task_id)?),
        &json!({"for_s": seconds}),
    )?;
    Ok(())
}

/// A question id the server does not know for this login: mistyped, or
/// another owner's; the list has the open ones.
fn no_such_question(question: &str) -> Fail {
    Fail::new(
        exit::REFUSED,
        format!(
            "no open question {question} in your list: `needs-you ls` shows the open ones with their ids"
        ),
    )
}

/// [`no_such_question`] for the server's 404.
fn unknown(question: &str) -> impl Fn(Failure) -> Fail + '_ {
    move |f| {
        if f.status == Some(404) {
            no_such_question(question)
        } else {
            f.into()
        }
    }
}

/// `dismiss QUESTION`.
pub fn dismiss(question: &str) -> Result<i32> {
    let (_, client) = logged_in()?;
    client
        .post::<Value>(
            &format!("/v1/questions/{}/dismiss", path_part(question)?),
            &json!({}),
        )
        .map_err(unknown(question))?;
    println!("Dismissed {question}.");
    Ok(exit::OK)
}

/// What `answer` was told to say.
pub enum Reply {
    Text(String),
    Allow,
    /// Allow with a lasting choice, by its id.
    Keep(String),
    Deny(Option<String>),
    /// One entry per question; a multiple choice's labels joined by `|`.
    Choose(Vec<String>),
}

impl Reply {
    /// From the command line: exactly one of the four.
    pub fn from_args(
        allow: bool,
        keep: Option<String>,
        deny: Option<String>,
        choose: Vec<String>,
        text: Vec<String>,
    ) -> Result<Reply> {
        let given = [
            allow,
            keep.is_some(),
            deny.is_some(),
            !choose.is_empty(),
            !text.is_empty(),
        ];
        match given.iter().filter(|g| **g).count() {
            1 => {}
            0 => {
                return Err(Fail::new(
                    exit::USAGE,
                    "`answer` needs the answer: a text, --allow, --keep, --deny or --choose",
                ))
            }
            _ => {
                return Err(Fail::new(
                    exit::USAGE,
                    "`answer` takes one answer: a text, --allow, --keep, --deny or --choose",
                ))
            }
        }
        Ok(if allow {
            Reply::Allow
        } else if let Some(id) = keep {
            Reply::Keep(id)
        } else if let Some(m) = deny {
            Reply::Deny(Some(m).filter(|m| !m.is_empty()))
        } else if !choose.is_empty() {
            Reply::Choose(choose)
        } else {
            Reply::Text(text.join(" "))
        })
    }

    fn body(self) -> AnswerBody {
        match self {
            Reply::Text(text) => AnswerBody::Text { text },
            Reply::Allow => AnswerBody::Decision {
                decision: Verdict::Allow,
                message: None,
            },
            Reply::Keep(id) => AnswerBody::Decision {
                decision: Verdict::Lasting(id),
                message: None,
            },
            Reply::Deny(message) => AnswerBody::Decision {
                decision: Verdict::Deny,
                message,
            },
            Reply::Choose(each) => AnswerBody::Choices {
                choices: each
                    .iter()
                    .map(|c| c.split('|').map(|l| l.trim().to_owned()).collect())
                    .collect(),
            },
        }
    }
}

/// The digest of the request `q` takes an answer for, computed here from
/// the request itself, once the card built here from it is the one the
/// list shows: a server that shows other words than its request's gets no
/// answer, and the statement never carries a digest the server handed over.
fn request_shown(
    client: &Client,
    opener: &mut cards::Built,
    q: &Question,
    form: Afar,
) -> Result<String> {
    let (_, request) = opener
        .request_of(client, q)
        .map_err(|why| Fail::new(exit::SERVER, why.to_string()))?;
    let request = request.ok_or_else(|| {
        Fail::new(
            exit::SERVER,
            "the server gave no request for that question, so its card cannot be checked: not answered",
        )
    })?;
    // Built as the kind the answer's form answers, whatever kind the list
    // says the question is: the machine takes that form for that kind only.
    card::check_shown(form.kind(), &request, &q.text).map_err(|built| {
        Fail::new(
            exit::REFUSED,
            format!(
                "the card the server shows is not what the agent's request asks, so nothing was answered; the request asks: {}",
                needs_you_core::text::line(&built)
            ),
        )
    })
}

/// `answer QUESTION (TEXT | --allow | --deny [MESSAGE] | --choose LABEL…)`:
/// queued like the page's, bound to the request the list shows now (its
/// digest), then followed until it is typed or taken by the agent, or
/// refused (`FOLLOW_FOR` at most: the agent's machine may be asleep).
pub fn answer(question: &str, reply: Reply, yes: bool) -> Result<i32> {
    let (login, client) = logged_in()?;
    let id = path_part(question)?;
    let body = reply.body();
    let mut request = serde_json::to_value(&body).unwrap_or_default();
    let signer = trusting::signer(&login, &client)?;
    // Under an owner, an answer goes signed or not at all: unsigned, its
    // words would reach the server in the clear, and no machine takes it.
    if signer.is_none() && login.owner.is_some() && body.has_words() {
        return Err(Fail::new(
            exit::REFUSED,
            "the server says this command line may not answer, so nothing was sent: `needs-you devices` on your own machine shows what each may do",
        ));
    }
    if body.form() != Afar::Text || signer.is_some() {
        let list: NeedsYou = client.get("/v1/needs-you")?;
        let listed = list
            .questions
            .iter()
            .find(|l| l.question.question_id == question)
            .ok_or_else(|| no_such_question(question))?;
        compose::words_may_go(&listed.question, &body, login.owner.is_some())?;
        // The question as the list shows it, its sealed words opened here.
        let mut opener = cards::Built::new(&login);
        let mut shown = listed.clone();
        // A sealed question's digest, of the request its machine sealed: its
        // card is built here from that request, so there is no server's
        // text to check it against.
        let mut sealed_digest = None;
        if listed.question.sealed {
            let (words, request) = opener
                .request_of(&client, &listed.question)
                .map_err(|why| {
                    Fail::new(
                        exit::REFUSED,
                        format!("its words did not open here ({why}): not answered"),
                    )
                })?;
            // Its words put back, with the place its machine sealed for that
            // open (folder, pane, host), which the person reads before it goes.
            match words {
                Some(w) => w.restore(&mut shown.question),
                None => shown.question.text.clear(),
            }
            // The card as built here from the request its machine sealed, as
            // for any question: never another build's words.
            if let (Afar::Decision | Afar::Choices, Some(r)) = (body.form(), request) {
                let built = opener
                    .named(&listed.question, card::to_sign(body.form().kind(), &r))
                    .map_err(|why| Fail::new(exit::REFUSED, format!("{why}: not answered")))?;
                shown.question.text = built.text;
                sealed_digest = Some(built.digest);
            }
        }
        let digest = match body.form() {
            Afar::Text => None,
            _ => {
                let digest = match sealed_digest {
                    Some(digest) => digest,
                    None => request_shown(&client, &mut opener, &shown.question, body.form())?,
                };
                // What is signed: the card as built here from the request.
                let card = needs_you_core::text::line(&shown.question.text);
                println!("{}: {card}", body.summary());
                let place = crate::display::place(shown.question.terminal.as_ref());
                if !place.is_empty() {
                    println!("  {place}");
                }
                // At a terminal, the person reads what they sign before it
                // goes, as the page asks before an allow.
                if !yes && term::confirm("Send it?") == Some(false) {
                    return Err(Fail::new(exit::REFUSED, "nothing was sent"));
                }
                Some(digest)
            }
        };
        let signing = match &signer {
            Some(signer) => Some(Signing {
                owner: &signer.owner,
                id: keys::random_id()?,
                now_ms: now_ms() as i64,
            }),
            None => None,
        };
        let (composed, statement) =
            compose::compose(&shown.question, &body, digest, signing, |answer| {
                opener.seal_answer(&listed.question, answer)
            })
            .map_err(|why| Fail::new(exit::REFUSED, format!("{why}: not answered")))?;
        request = composed;
        if let (Some(signer), Some(statement)) = (&signer, statement) {
            request["signed"] = json!(signer.sign(&statement));
        }
    }
    let queued: Queued = client
        .post(&format!("/v1/questions/{id}/answers"), &request)
        .map_err(unknown(question))?;
    println!("Sent; waiting for the agent's machine…");
    let path = format!("/v1/answers/{}", path_part(&queued.answer_id)?);
    let deadline = Instant::now() + FOLLOW_FOR;
    loop {
        let a: AnswerStatus = client.get(&path)?;
        match a.state {
            AnswerState::Typed => {
                println!("Typed into the agent's terminal.");
                return Ok(exit::OK);
            }
            AnswerState::Taken => {
                let text = cards::Built::new(&login).answer_text(
                    &client,
                    &a.question_id,
                    a.sealed.as_deref(),
                    &a.text,
                );
                println!("The agent took it: {}.", needs_you_core::text::line(&text));
                return Ok(exit::OK);
            }
            AnswerState::Failed => {
                let reason = a.reason.unwrap_or_default();
                let what = if a.form == Afar::Text {
                    "typed"
                } else {
                    "taken"
                };
                return Err(Fail::new(exit::REFUSED, format!("not {what}: {reason}")));
            }
            state if Instant::now() >= deadline => {
                if state == AnswerState::Delivered {
                    println!("The agent's machine has it; it has not said yet whether the agent took it.");
                } else {
                    println!(
                        "The agent's machine has not picked it up in {} s: it may be asleep or offline, \
                         or its relay stopped. It will when it is back; a new `needs-you answer` replaces \
                         this one until then.",
                        FOLLOW_FOR.as_secs()
                    );
                }
                return Ok(exit::OK);
            }
            _ => std::thread::sleep(Duration::from_millis(300)),
        }
    }
}
