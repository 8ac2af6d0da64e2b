//! The value parsers the commands' arguments share.

use needs_you_core::api::{Right, Rights};

pub(super) fn non_blank(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("needs a name".into())
    } else {
        Ok(s.to_owned())
    }
}

/// "tasks,answer": every name one of [`Right`]'s.
pub(super) fn rights(s: &str) -> Result<Rights, String> {
    let names: Vec<&str> = s
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .collect();
    let known: Vec<Right> = names.iter().filter_map(|r| Right::parse(r)).collect();
    if known.len() != names.len() {
        return Err(format!("rights are {}", Right::choices()));
    }
    Ok(Rights::from(known))
}

/// Parses "90s", "90m", "8h", "7d" into seconds.
pub fn duration_s(s: &str) -> Result<u64, String> {
    let bad = || format!("{s:?} is not a duration such as 90m, 8h or 7d");
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?);
    let n: u64 = num.parse().ok().filter(|n| *n > 0).ok_or_else(bad)?;
    let mult = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}
