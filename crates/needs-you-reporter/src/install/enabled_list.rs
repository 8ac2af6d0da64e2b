//! Adding a name to `plugins.enabled` in Hermes's `config.yaml`, and removing
//! it, by editing lines: a YAML library would rewrite the person's whole file
//! and drop their comments. It handles the shapes Hermes itself writes (a block
//! list, or a flow list such as `[]`) and creates what is missing.

use crate::error::Error;

/// Returns the new text, or `None` when `name` is already enabled; an error
/// for shapes it will not rewrite (a multi-line flow list, an inline map).
pub fn add(text: &str, name: &str) -> Result<Option<String>, Error> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let Some(plugins) = top_level_key(&lines, "plugins") else {
        let mut out = text.to_owned();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("plugins:\n  enabled:\n    - {name}\n"));
        return Ok(Some(out));
    };
    match value_after_colon(&lines[plugins]) {
        "" => {}
        v if is_empty_value(v) => lines[plugins] = "plugins:".to_owned(),
        _ => return Err(Error::Settings(by_hand("plugins"))),
    }
    let end = block_end(&lines, plugins);
    let child_indent = lines[plugins + 1..end]
        .iter()
        .find(|l| is_content(l))
        .map_or(2, |l| indent(l));
    let Some(enabled) = child_key(&lines, plugins, end, child_indent, "enabled") else {
        lines.insert(plugins + 1, format!("{}enabled:", " ".repeat(child_indent)));
        lines.insert(
            plugins + 2,
            format!("{}- {name}", " ".repeat(child_indent + 2)),
        );
        return Ok(Some(join(lines)));
    };
    let rest = value_after_colon(&lines[enabled]).to_owned();
    if rest.starts_with('[') {
        let mut items = flow_items(&rest)?;
        if items.iter().any(|i| i == name) {
            return Ok(None);
        }
        items.push(name.to_owned());
        lines[enabled] = flow_line(&lines[enabled], &items);
        return Ok(Some(join(lines)));
    }
    if is_empty_value(&rest) {
        lines[enabled] = format!("{}enabled:", " ".repeat(child_indent));
    } else if !rest.is_empty() {
        return Err(Error::Settings(by_hand("plugins.enabled")));
    }
    let items_end = block_end(&lines, enabled);
    let items: Vec<usize> = (enabled + 1..items_end)
        .filter(|&i| list_item(&lines[i]).is_some())
        .collect();
    if items.iter().any(|&i| list_item(&lines[i]) == Some(name)) {
        return Ok(None);
    }
    let (at, item_indent) = match items.last() {
        Some(&last) => (last + 1, indent(&lines[last])),
        None => (enabled + 1, child_indent + 2),
    };
    lines.insert(at, format!("{}- {name}", " ".repeat(item_indent)));
    Ok(Some(join(lines)))
}

/// Returns the text without `name` in `plugins.enabled`, or `None` if it was not there.
pub fn remove(text: &str, name: &str) -> Result<Option<String>, Error> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let Some(plugins) = top_level_key(&lines, "plugins") else {
        return Ok(None);
    };
    let end = block_end(&lines, plugins);
    let Some(child_indent) = lines[plugins + 1..end]
        .iter()
        .find(|l| is_content(l))
        .map(|l| indent(l))
    else {
        return Ok(None);
    };
    let Some(enabled) = child_key(&lines, plugins, end, child_indent, "enabled") else {
        return Ok(None);
    };
    let rest = value_after_colon(&lines[enabled]).to_owned();
    if rest.starts_with('[') {
        let items = flow_items(&rest)?;
        if !items.iter().any(|i| i == name) {
            return Ok(None);
        }
        let kept: Vec<String> = items.into_iter().filter(|i| i != name).collect();
        lines[enabled] = flow_line(&lines[enabled], &kept);
        return Ok(Some(join(lines)));
    }
    let items_end = block_end(&lines, enabled);
    let Some(at) = (enabled + 1..items_end).find(|&i| list_item(&lines[i]) == Some(name)) else {
        return Ok(None);
    };
    lines.remove(at);
    Ok(Some(join(lines)))
}

fn by_hand(key: &str) -> String {
    format!("`{key}` in config.yaml has a shape this installer does not rewrite; add needs-you to plugins.enabled by hand")
}

fn is_empty_value(v: &str) -> bool {
    matches!(v, "{}" | "null" | "~" | "[]")
}

/// `key: [a, b]`, keeping the line's indent and any trailing comment.
fn flow_line(line: &str, items: &[String]) -> String {
    let comment = line.find(" #").map_or("", |i| &line[i..]);
    let key = line.split_once(':').map_or("enabled", |(k, _)| k);
    format!("{key}: [{}]{comment}", items.join(", "))
}

fn child_key(
    lines: &[String],
    parent: usize,
    end: usize,
    child_indent: usize,
    key: &str,
) -> Option<usize> {
    (parent + 1..end).find(|&i| indent(&lines[i]) == child_indent && key_of(&lines[i]) == Some(key))
}

/// True when `name` appears in `plugins.disabled`, which wins over `enabled`.
pub fn is_disabled(text: &str, name: &str) -> bool {
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let Some(plugins) = top_level_key(&lines, "plugins") else {
        return false;
    };
    let end = block_end(&lines, plugins);
    let Some(disabled) = (plugins + 1..end).find(|&i| key_of(&lines[i]) == Some("disabled")) else {
        return false;
    };
    let rest = value_after_colon(&lines[disabled]);
    if rest.starts_with('[') {
        return flow_items(rest).is_ok_and(|items| items.iter().any(|i| i == name));
    }
    (disabled + 1..block_end(&lines, disabled)).any(|i| list_item(&lines[i]) == Some(name))
}

fn join(lines: Vec<String>) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

fn key_of(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with('-') || t.starts_with('#') {
        return None;
    }
    t.split_once(':')
        .map(|(k, _)| k.trim().trim_matches(|c| c == '"' || c == '\''))
}

fn value_after_colon(line: &str) -> &str {
    line.split_once(':')
        .map_or("", |(_, v)| v.split(" #").next().unwrap_or("").trim())
}

fn top_level_key(lines: &[String], key: &str) -> Option<usize> {
    lines
        .iter()
        .position(|l| indent(l) == 0 && key_of(l) == Some(key))
}

/// The first line after `start` that is indented no deeper than `start` (or the end).
fn block_end(lines: &[String], start: usize) -> usize {
    let base = indent(&lines[start]);
    (start + 1..lines.len())
        .find(|&i| {
            is_content(&lines[i])
                && indent(&lines[i]) <= base
                && !(list_item(&lines[i]).is_some() && indent(&lines[i]) == base && base > 0)
        })
        .unwrap_or(lines.len())
}

fn list_item(line: &str) -> Option<&str> {
    let t = line.trim_start().strip_prefix("- ")?;
    Some(
        t.split(" #")
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches(|c| c == '"' || c == '\''),
    )
}

fn flow_items(rest: &str) -> Result<Vec<String>, Error> {
    let Some(inner) = rest
        .strip_prefix('[')
        .and_then(|r| r.split(']').next().filter(|_| r.contains(']')))
    else {
        return Err(Error::Settings(by_hand("plugins.enabled")));
    };
    Ok(inner
        .split(',')
        .map(|s| s.trim().trim_matches(|c| c == '"' || c == '\'').to_owned())
        .filter(|s| !s.is_empty())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add_(text: &str, name: &str) -> Option<String> {
        add(text, name).unwrap()
    }

    fn remove_(text: &str, name: &str) -> Option<String> {
        remove(text, name).unwrap()
    }

    #[test]
    fn empty_inline_values_become_blocks() {
        assert_eq!(
            add_("plugins: {}\n", NAME).unwrap(),
            "plugins:\n  enabled:\n    - needs-you\n"
        );
        assert_eq!(
            add_("plugins: null\n", NAME).unwrap(),
            "plugins:\n  enabled:\n    - needs-you\n"
        );
        assert_eq!(
            add_("plugins:\n  enabled: ~\n", NAME).unwrap(),
            "plugins:\n  enabled:\n    - needs-you\n"
        );
    }

    #[test]
    fn shapes_it_will_not_rewrite_are_refused() {
        assert!(add("plugins: {enabled: [a]}\n", NAME).is_err());
        assert!(add("plugins:\n  enabled: [a,\n    b]\n", NAME).is_err());
        assert!(add("plugins:\n  enabled: a\n", NAME).is_err());
    }

    #[test]
    fn a_comment_after_a_flow_list_stays() {
        let out = add_("plugins:\n  enabled: [a] # mine\n", NAME).unwrap();
        assert_eq!(out, "plugins:\n  enabled: [a, needs-you] # mine\n");
        assert_eq!(
            remove_(&out, NAME).unwrap(),
            "plugins:\n  enabled: [a] # mine\n"
        );
    }

    #[test]
    fn only_plugins_own_enabled_counts() {
        let text = "plugins:\n  other:\n    enabled:\n      - needs-you\n";
        assert_eq!(remove_(text, NAME), None);
    }

    const NAME: &str = "needs-you";

    #[test]
    fn creates_what_is_missing() {
        assert_eq!(
            add_("", NAME).unwrap(),
            "plugins:\n  enabled:\n    - needs-you\n"
        );
        assert_eq!(
            add_("model: x\n# mine\n", NAME).unwrap(),
            "model: x\n# mine\nplugins:\n  enabled:\n    - needs-you\n"
        );
        assert_eq!(
            add_("plugins:\n  disabled:\n    - other\nmodel: x\n", NAME).unwrap(),
            "plugins:\n  enabled:\n    - needs-you\n  disabled:\n    - other\nmodel: x\n"
        );
    }

    #[test]
    fn appends_to_a_block_list_and_keeps_the_rest() {
        let text = "# my config\nplugins:\n  enabled:\n    - disk-cleanup  # keep\n  disabled: []\nmodel:\n  default: m\n";
        let out = add_(text, NAME).unwrap();
        assert_eq!(out, "# my config\nplugins:\n  enabled:\n    - disk-cleanup  # keep\n    - needs-you\n  disabled: []\nmodel:\n  default: m\n");
        assert_eq!(add_(&out, NAME), None, "a second run changes nothing");
        assert_eq!(remove_(&out, NAME).unwrap(), text);
    }

    #[test]
    fn block_lists_at_the_key_indent() {
        let text = "plugins:\n  enabled:\n  - a\n  - b\n";
        let out = add_(text, NAME).unwrap();
        assert_eq!(out, "plugins:\n  enabled:\n  - a\n  - b\n  - needs-you\n");
        assert_eq!(remove_(&out, NAME).unwrap(), text);
    }

    #[test]
    fn flow_lists() {
        let out = add_("plugins:\n  enabled: []\n", NAME).unwrap();
        assert_eq!(out, "plugins:\n  enabled: [needs-you]\n");
        let out = add_("plugins:\n  enabled: [a, \"b\"]\n", NAME).unwrap();
        assert_eq!(out, "plugins:\n  enabled: [a, b, needs-you]\n");
        assert_eq!(add_(&out, NAME), None);
        assert_eq!(
            remove_(&out, NAME).unwrap(),
            "plugins:\n  enabled: [a, b]\n"
        );
    }

    #[test]
    fn disabled_wins_and_is_reported() {
        assert!(is_disabled(
            "plugins:\n  disabled:\n    - needs-you\n",
            NAME
        ));
        assert!(is_disabled("plugins:\n  disabled: [needs-you]\n", NAME));
        assert!(!is_disabled(
            "plugins:\n  enabled:\n    - needs-you\n",
            NAME
        ));
    }

    #[test]
    fn removing_what_is_not_there_changes_nothing() {
        assert_eq!(remove_("model: x\n", NAME), None);
        assert_eq!(remove_("plugins:\n  enabled:\n    - a\n", NAME), None);
    }
}
