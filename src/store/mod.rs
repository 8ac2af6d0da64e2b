//! Every D1 statement the Worker runs, one module per table group; no SQL
//! leaves this folder.
//!
//! * [`questions`]: a question's life (open, supersede, close, notify,
//!   delete): every statement that changes one.
//! * [`list`]: what the page shows, read in one batch.
//! * [`revision`]: the owner's list revision, the list's ETag.
//! * [`reports`]: the report's one atomic batch, built from those statements.
//! * [`accounts`]: owners and tasks.
//! * [`devices`]: paired devices and their pairing codes.
//! * [`channels`], [`deliveries`]: where owners are notified, and every attempt.
//! * [`answers`]: answers to replies, on their way to the agent's terminal.
//! * [`rules`]: the lasting rules granted from afar, and taking them back.
//! * [`history`]: every question kept, a page at a time, with its answers and rules.
//! * `sql`: what every statement is made with (the database, values bound,
//!   the rows a statement changed).
//!
//! Each statement is one complete constant, with the parameters it binds named
//! in its doc comment. Numbers are bound as f64 (D1 rejects BigInt;
//! milliseconds and `seq` stay exact up to 2^53) and read back as i64.

mod accounts;
mod answers;
mod channels;
mod deliveries;
mod devices;
mod list;
#[macro_use]
mod questions;
mod reports;
mod revision;
#[macro_use]
mod rules;
mod sql;
// After the two modules whose column lists it reads.
mod history;

pub use accounts::*;
pub use answers::*;
pub use channels::*;
pub use deliveries::*;
pub use devices::*;
pub use history::*;
pub use list::*;
pub use questions::*;
pub use reports::*;
pub use revision::list_revision;
pub use rules::*;
pub use sql::ReportKeys;

#[cfg(test)]
mod tests {
    /// The benchmark's fair floor (`bench/fair/index.js`) runs the report's
    /// statements in JavaScript to show what the same work costs there. It
    /// compares with this Worker only while its SQL is this Worker's: checked
    /// statement by statement, white space aside.
    #[test]
    fn the_fair_floor_runs_the_report_path_s_own_statements() {
        let js = include_str!("../../bench/fair/index.js");
        let ours = [
            ("CLAIM", super::reports::CLAIM),
            ("SUPERSEDE", super::questions::SUPERSEDE),
            ("OPEN", super::questions::OPEN),
            ("REOPEN_SAME", super::questions::REOPEN_SAME),
            ("CLOSE_IN_SESSION", super::questions::CLOSE_IN_SESSION),
            ("TOUCH_TASK", super::reports::TOUCH_TASK),
            (
                "BUMP_REVISION_OF_APPLIED_REPORT",
                super::revision::BUMP_REVISION_OF_APPLIED_REPORT,
            ),
            ("OUTCOME", super::reports::OUTCOME),
            ("SESSION_OPEN", super::reports::SESSION_OPEN),
        ];
        let words = |sql: &str| sql.split_whitespace().collect::<Vec<_>>().join(" ");
        for (name, sql) in ours {
            let start = js
                .find(&format!("const {name} = `"))
                .unwrap_or_else(|| panic!("bench/fair has no {name}"));
            let body = &js[start..].split('`').nth(1).unwrap();
            assert_eq!(words(body), words(sql), "bench/fair's {name} drifted");
        }
    }
}
