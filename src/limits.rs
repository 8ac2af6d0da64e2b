//! How much one owner, task or credential may hold or do: every number in
//! one place, each refused with a clear 4xx (`docs/api.md` lists them). A
//! count is checked inside the statement that would pass it, so that two
//! requests at once cannot both slip under it; a rate goes through the
//! runtime's rate limiter, per credential.

/// Open questions of one task at once (one per session; subagents report
/// under their person's session).
pub const OPEN_QUESTIONS_PER_TASK: u32 = 20;
/// Live tasks of one owner.
pub const TASKS_PER_OWNER: u32 = 100;
/// Live devices of one owner.
pub const DEVICES_PER_OWNER: u32 = 20;
/// Live, unused pairing codes of one owner. Codes are drawn from one space
/// of 2^20 ids for every owner: this keeps one owner from using it up.
pub const PAIRING_CODES_PER_OWNER: u32 = 5;
/// Questions in one list: the newest; `more` says how many are left out.
pub const LIST_QUESTIONS: u32 = 50;
/// Questions in one page of the history, unless asked for fewer.
pub const HISTORY_PAGE: u32 = 50;
/// The most questions one page of the history holds.
pub const HISTORY_PAGE_MAX: u32 = 200;

/// The runtime's rate limiters (`ratelimits` in `wrangler.toml`, which
/// holds their numbers): reports and relay messages per task, and answers,
/// screens and live-list messages per owner or device credential, per minute.
#[derive(Debug, Clone, Copy)]
pub enum Rate {
    Reports,
    Answers,
    /// Screens asked for (Show terminal), per owner or device credential.
    Screens,
    /// Messages from a task's relay, per task.
    Relay,
    /// Messages on the live list's sockets, per credential: a page says
    /// only its presence.
    Live,
    /// Tickets for the live list's socket, per credential: a page asks for
    /// one each time it opens its socket.
    Tickets,
}

impl Rate {
    fn binding(self) -> &'static str {
        match self {
            Rate::Reports => "REPORT_RATE",
            Rate::Answers => "ANSWER_RATE",
            Rate::Screens => "SCREEN_RATE",
            Rate::Relay => "RELAY_RATE",
            Rate::Live => "LIVE_RATE",
            Rate::Tickets => "TICKET_RATE",
        }
    }
}

/// Refuses with 429 a credential (`key`, its hash) past its rate. A Worker
/// deployed without the binding is not limited (and says so in its log).
pub async fn within_rate(
    env: &worker::Env,
    rate: Rate,
    key: &str,
) -> Result<(), crate::json::ApiError> {
    let Ok(limiter) = env.rate_limiter(rate.binding()) else {
        worker::console_error!("no {} binding: {rate:?} are not limited", rate.binding());
        return Ok(());
    };
    match limiter.limit(key.to_owned()).await {
        Ok(outcome) if !outcome.success => Err(crate::json::ApiError::new(
            429,
            "rate_limited",
            match rate {
                Rate::Reports => "this task reports faster than any agent asks: slow down",
                Rate::Answers => "too many answers from this credential in a minute: wait a moment",
                Rate::Screens => {
                    "too many screens asked for by this credential in a minute: wait a moment"
                }
                Rate::Relay => "this task's relay sends faster than any relay needs: slow down",
                Rate::Live => "this page says more than its presence: slow down",
                Rate::Tickets => {
                    "too many live-list tickets asked for by this credential in a minute: wait a moment"
                }
            },
        )),
        // The limiter failing is no reason to refuse a person.
        _ => Ok(()),
    }
}
