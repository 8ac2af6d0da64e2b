//! Lists for a person: the "Needs you" list, the tasks, the channels and a
//! test push's results, each line cut to the terminal's width. Pure: the
//! JSON and the time come in, the text goes out.

use needs_you_core::afar::Afar;
use needs_you_core::api::{
    Channel, Device, Listed, Past, Rule, RuleState, Task, TaskState, TestResult,
};
use needs_you_core::{Cli, Terminal};

use crate::term::cut;

/// The rules granted from afar, one a paragraph: the rule, where it is kept
/// and for how long, who granted it where, and where it is now.
pub fn rules(rows: &[Rule], now: f64) -> String {
    if rows.is_empty() {
        return "No rules granted from afar.\n".into();
    }
    let mut out = String::new();
    for r in rows {
        let state = match r.state {
            RuleState::Granted => "in force",
            RuleState::Revoking => "being taken back",
            RuleState::Revoked => "taken back",
            RuleState::Gone => "no longer there as written",
        };
        out.push_str(&format!(
            "{}  {}  ({state})\n  kept in {}, {}\n  granted by {} on {} {} ago\n",
            r.rule_id,
            r.rule,
            r.place,
            r.lasts,
            r.granted_by,
            r.host.as_deref().unwrap_or("?"),
            age(r.granted_at as f64, now),
        ));
        if let Some(note) = &r.note {
            out.push_str(&format!("  {note}\n"));
        }
    }
    out
}

/// The history, newest first, a paragraph a question: when, which task
/// and who asked, how it ended; its words; each answer (what, by whom, when,
/// what became of it); each rule it granted; and its id and place.
pub fn history(rows: &[Past], searched: bool, now: f64, width: usize) -> String {
    if rows.is_empty() {
        return if searched {
            "Nothing in the history holds those words.\n".into()
        } else {
            "No questions yet.\n".into()
        };
    }
    let mut out = String::new();
    for p in rows {
        let q = &p.question;
        let ended = match (q.closed_at, q.close_reason) {
            (None, _) => "open".to_owned(),
            (Some(at), reason) => format!(
                "{} {} ago",
                reason.map_or("closed", |r| r.as_str()),
                age(at as f64, now)
            ),
        };
        out.push_str(&cut(
            &format!(
                "{} ago  {} · {} · {ended}",
                age(q.opened_at as f64, now),
                q.task_name,
                p.who
            ),
            width,
        ));
        out.push('\n');
        for line in q.text.lines().take(3) {
            out.push_str(&cut(&format!("  {line}"), width));
            out.push('\n');
        }
        for a in &p.answers {
            let at = a.created_at.unwrap_or(a.updated_at);
            let line = format!(
                "  answered {} by {}, {} ago: {}{}",
                a.text,
                a.by.as_deref().unwrap_or("?"),
                age(at as f64, now),
                a.state.as_str(),
                a.reason
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            );
            out.push_str(&cut(&line, width));
            out.push('\n');
        }
        for r in &p.rules {
            out.push_str(&cut(
                &format!("  granted rule {} ({})", r.rule, r.state.as_str()),
                width,
            ));
            out.push('\n');
        }
        let at = place(q.terminal.as_ref());
        let id = if at.is_empty() {
            q.question_id.clone()
        } else {
            format!("{} · {at}", q.question_id)
        };
        out.push_str(&cut(&format!("  {id}"), width));
        out.push('\n');
    }
    out
}

/// "12s", "3m", "2h", "4d".
pub fn age(ms: f64, now: f64) -> String {
    let s = ((now - ms) / 1000.0).max(0.0) as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m", s / 60),
        3600..=86_399 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

fn agent(cli: Option<Cli>) -> &'static str {
    cli.map_or("-", Cli::display_name)
}

/// What a question takes from afar, in a word for a column.
fn takes(q: &needs_you_core::api::Question) -> &'static str {
    match q.answer_from_afar {
        Some(Afar::Text) => "text",
        Some(Afar::Decision) => "allow/deny",
        Some(Afar::Choices) => "choose",
        None => "terminal",
    }
}

/// Where a question's agent runs: "on box · ~/src/api · tmux main:1.0".
pub fn place(t: Option<&Terminal>) -> String {
    let Some(t) = t else {
        return String::new();
    };
    [
        (!t.host.is_empty()).then(|| format!("on {}", t.host)),
        (!t.cwd.is_empty()).then(|| t.cwd.clone()),
        t.target.as_ref().map(|x| format!("tmux {x}")),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" · ")
}

/// The open questions, newest first, as the server sorted them: a line
/// each, and under it the id that `answer` and `dismiss` take and where the
/// agent runs.
pub fn questions(rows: &[Listed], now: f64, width: usize) -> String {
    if rows.is_empty() {
        return "All quiet: nothing needs you.\n".into();
    }
    let mut out = format!(
        "{:<5} {:<16} {:<11} {:<10} {:<10} TEXT\n",
        "AGE", "TASK", "AGENT", "KIND", "ANSWER"
    );
    for Listed { question: q, .. } in rows {
        let text_width = width.saturating_sub(57).max(10);
        let line = format!(
            "{:<5} {:<16} {:<11} {:<10} {:<10} {}",
            age(q.opened_at as f64, now),
            cut(&q.task_name, 16),
            agent(Some(q.cli)),
            q.kind.as_str(),
            takes(q),
            cut(&q.text, text_width),
        );
        out.push_str(&line);
        out.push('\n');
        let mut under = format!("      {}", q.question_id);
        let place = place(q.terminal.as_ref());
        if !place.is_empty() {
            under.push_str(&format!(
                " · {}",
                cut(&place, width.saturating_sub(under.len() + 3))
            ));
        }
        out.push_str(&under);
        out.push('\n');
    }
    out
}

pub fn tasks(rows: &[Task], now: f64, width: usize) -> String {
    if rows.is_empty() {
        return "No live tasks. Start one with `needs-you run -- COMMAND`.\n".into();
    }
    let mut out = format!(
        "{:<24} {:<24} {:<11} LAST REPORT\n",
        "TASK", "STATE", "AGENT"
    );
    for t in rows {
        let state = match t.state {
            TaskState::Waiting => "waiting for your answer",
            TaskState::Running => "running",
        };
        let mut last = t.last_report_at.map_or("none".to_owned(), |at| {
            format!("{} ago", age(at as f64, now))
        });
        if let Some(until) = t.muted_until.filter(|u| *u as f64 > now) {
            last.push_str(&format!(" · muted for {}", age(now, until as f64)));
        }
        let line = format!(
            "{:<24} {:<24} {:<11} {last}",
            cut(&t.name, 24),
            state,
            agent(t.cli),
        );
        out.push_str(&cut(&line, width));
        out.push('\n');
    }
    out
}

pub fn channel_line(c: &Channel, now: f64) -> String {
    let mut line = format!("{:<8} {}", c.settings.kind(), cut(c.settings.url(), 200));
    line.push_str(if c.settings.words() {
        "  with words"
    } else {
        "  no words (which CLI, what kind)"
    });
    let outcome = c.outcome.clone().unwrap_or_default();
    if let Some(at) = outcome.last_success_at {
        line.push_str(&format!("  last delivered {} ago", age(at as f64, now)));
    }
    if let Some(e) = outcome.last_error {
        line.push_str(&format!("  last error: {}", cut(&e, 200)));
    }
    line
}

pub fn channels(rows: &[Channel], now: f64) -> String {
    if rows.is_empty() {
        return "No channels. Set one: needs-you channels set ntfy https://ntfy.sh/<a-long-random-topic>\n"
            .into();
    }
    rows.iter().map(|c| channel_line(c, now) + "\n").collect()
}

pub fn test_results(results: &[TestResult]) -> String {
    results
        .iter()
        .map(|r| {
            let outcome = if r.ok {
                format!("answered {}", r.status.unwrap_or(0))
            } else {
                format!(
                    "failed: {}",
                    cut(r.error.as_deref().unwrap_or("no answer"), 200)
                )
            };
            format!("{:<32} {outcome}\n", cut(&r.name, 32))
        })
        .collect()
}

/// What the owner's key vouches for (`vouched`, key by device id) and the
/// server does not list among `rows`: a server that hides a device it still
/// lets answer, or a device that logged itself out, whose key is struck only
/// by the owner's revoke.
pub fn unlisted<'a>(
    rows: &[Device],
    vouched: &'a std::collections::BTreeMap<String, String>,
) -> Vec<(&'a String, &'a String)> {
    vouched
        .iter()
        .filter(|(id, _)| !rows.iter().any(|d| &d.device_id == *id))
        .collect()
}

/// A key's fingerprint cut to what a person compares, by characters.
fn short(fp: &str) -> String {
    format!("{}…", fp.chars().take(11).collect::<String>())
}

/// The devices, each with the start of the key this machine vouched for
/// under its id (`vouched`, by id), `-` where it vouched for none.
pub fn devices(
    rows: &[Device],
    vouched: &std::collections::BTreeMap<String, String>,
    now: f64,
) -> String {
    let unlisted = unlisted(rows, vouched);
    let mut out = String::new();
    if !unlisted.is_empty() {
        out.push_str("Your key still vouches for these, which the server does not list: while their certificates last, they answer on every machine that pinned your key.\n");
        for (id, fp) in &unlisted {
            out.push_str(&format!(
                "  {id} (key {}): needs-you devices revoke {id}\n",
                short(fp)
            ));
        }
    }
    if rows.is_empty() {
        out.push_str(match unlisted.is_empty() {
            true => "No devices. Pair one: needs-you pair\n",
            false => "The server lists no devices. Pair one: needs-you pair\n",
        });
        return out;
    }
    out += &format!(
        "{:<36} {:<12} {:<24} {:<6} {:<22} PAIRED BY\n",
        "DEVICE", "KEY", "NAME", "AGE", "MAY"
    );
    for d in rows {
        let may = match d.rights.to_list().as_str() {
            "" => "read".to_owned(),
            list => format!("read,{list}"),
        };
        let key = vouched
            .get(&d.device_id)
            .map_or("-".to_owned(), |fp| short(fp));
        out.push_str(&format!(
            "{:<36} {:<12} {:<24} {:<6} {:<22} {}\n",
            // The server's words, one line each: no row or banner it makes up.
            cut(&d.device_id, 36),
            key,
            cut(&d.name, 24),
            age(d.created_at as f64, now),
            may,
            cut(d.paired_by.as_deref().unwrap_or("the owner"), 36)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_vouched_device_the_server_does_not_list_is_shown_with_its_revoke() {
        let listed: Vec<Device> =
            serde_json::from_value(json!([{"device_id": "dev_a", "name": "phone",
            "created_at": 0, "push": false, "rights": [], "paired_by": null}]))
            .unwrap();
        let vouched = [
            ("dev_a".to_owned(), "FP-of-the-phone-A".to_owned()),
            ("dev_h".to_owned(), "FP-of-the-hidden-H".to_owned()),
        ]
        .into();
        let out = devices(&listed, &vouched, 1_000.0);
        assert!(
            out.contains("  dev_h (key FP-of-the-h…): needs-you devices revoke dev_h\n"),
            "{out}"
        );
        assert!(!out.contains("revoke dev_a"), "{out}");
        assert!(devices(&[], &vouched, 1_000.0).contains("revoke dev_a"));
        // A server's id with a line of its own in it stays on its row.
        let forged: Vec<Device> = serde_json::from_value(json!([{"device_id": "dev_x\nYour key still vouches for these",
            "name": "n", "created_at": 0, "push": false, "rights": [], "paired_by": "dev_y\n  dev_z"}]))
        .unwrap();
        let out = devices(&forged, &Default::default(), 1_000.0);
        assert_eq!(out.lines().count(), 2, "{out}");
        assert_eq!(
            devices(&[], &Default::default(), 1_000.0),
            "No devices. Pair one: needs-you pair\n"
        );
    }

    #[test]
    fn the_list_is_cut_to_the_width() {
        let now = 10_000_000.0;
        let list: Vec<Listed> = serde_json::from_value(json!([{"question_id": "q", "task_id": "t",
            "task_name": "api refactor", "session": "s", "cli": "claude-code", "kind": "dialog",
            "text": "Which auth strategy should the API use, OAuth or email links?", "options": [],
            "opened_at": now as i64 - 180_000, "notified_at": null, "closed_at": null,
            "close_reason": null, "who": "Claude Code is asking", "answer": null}]))
        .unwrap();
        let out = questions(&list, now, 80);
        let line = out.lines().nth(1).unwrap();
        assert!(
            line.starts_with("3m    api refactor     Claude Code dialog     terminal   Which auth"),
            "{line}"
        );
        assert!(line.chars().count() <= 80);
        assert!(line.ends_with('…'));
        assert_eq!(out.lines().nth(2).unwrap(), "      q", "the id under it");
        assert_eq!(questions(&[], now, 80), "All quiet: nothing needs you.\n");
    }

    #[test]
    fn ages() {
        assert_eq!(age(0.0, 59_000.0), "59s");
        assert_eq!(age(0.0, 7_200_000.0), "2h");
        assert_eq!(age(0.0, 3.0 * 86_400_000.0), "3d");
    }
}
