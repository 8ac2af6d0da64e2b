//! An MCP server asking the person for input through the agent (MCP's
//! elicitation): its message, and the form it asks to be filled. The form
//! is a flat JSON Schema object whose properties are strings, numbers,
//! booleans or choices (`enum`, or `oneOf` of `{const, title}`); a server
//! may instead ask the person to open a page (`mode: "url"`).

use serde_json::Value;

use super::str_field;
use crate::report::{truncate_chars, QuestionOption, MAX_LABEL_CHARS, MAX_OPTIONS};

/// The text and options of an elicitation from `server`: the message, a line
/// naming the fields that take typed values, the page to open in url mode,
/// and who asks; each choice of a field an option (prefixed with the
/// field's title when the form has several fields, as a dialog of several
/// questions is).
pub fn question(
    server: &str,
    message: &str,
    url: Option<&str>,
    schema: Option<&Value>,
) -> (String, Vec<QuestionOption>) {
    let fields: Vec<(&str, &Value)> = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, field)| {
            (
                str_field(field, "title")
                    .filter(|t| !t.is_empty())
                    .unwrap_or(name),
                field,
            )
        })
        .collect();
    let several = fields.len() > 1;
    let mut options = Vec::new();
    let mut typed = Vec::new();
    for (title, field) in &fields {
        let choices = choices(field);
        if choices.is_empty() {
            typed.push(*title);
        }
        for choice in choices {
            let label = if several {
                format!("{title}: {choice}")
            } else {
                choice
            };
            options.push(QuestionOption {
                label: truncate_chars(&label, MAX_LABEL_CHARS),
                description: None,
            });
        }
    }
    options.truncate(MAX_OPTIONS);
    let mut lines = vec![if message.trim().is_empty() {
        "An MCP server asks for your input".to_owned()
    } else {
        message.trim().to_owned()
    }];
    if !typed.is_empty() {
        lines.push(format!("To fill in: {}", typed.join(", ")));
    }
    if let Some(url) = url.filter(|u| !u.is_empty()) {
        lines.push(format!("To open: {url}"));
    }
    lines.push(if server.is_empty() {
        "(from an MCP server)".to_owned()
    } else {
        format!("(from the MCP server {server})")
    });
    (lines.join("\n"), options)
}

/// A field's choices, as the person reads them: an enum's values, a oneOf's
/// titles (or values), a boolean's yes and no; none for a typed value.
fn choices(field: &Value) -> Vec<String> {
    let word = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    if let Some(values) = field.get("enum").and_then(Value::as_array) {
        return values.iter().filter_map(word).collect();
    }
    if let Some(items) = field
        .get("oneOf")
        .or_else(|| field.get("anyOf"))
        .and_then(Value::as_array)
    {
        return items
            .iter()
            .filter_map(|i| {
                str_field(i, "title")
                    .map(str::to_owned)
                    .or_else(|| i.get("const").and_then(word))
            })
            .collect();
    }
    match str_field(field, "type") {
        Some("boolean") => vec!["yes".to_owned(), "no".to_owned()],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(options: &[QuestionOption]) -> Vec<&str> {
        options.iter().map(|o| o.label.as_str()).collect()
    }

    #[test]
    fn one_choice_field_gives_its_values_as_options() {
        let schema = json!({"type": "object", "properties": {
            "environment": {"type": "string", "title": "Environment", "enum": ["staging", "production"]}}});
        let (text, options) = question(
            "asker",
            "Which environment should I deploy to?",
            None,
            Some(&schema),
        );
        assert_eq!(
            text,
            "Which environment should I deploy to?\n(from the MCP server asker)"
        );
        assert_eq!(labels(&options), ["staging", "production"]);
    }

    #[test]
    fn several_fields_prefix_their_choices_and_name_the_typed_ones() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string"},
            "region": {"type": "string", "title": "Region", "oneOf": [
                {"const": "eu", "title": "Europe"}, {"const": "us"}]},
            "confirm": {"type": "boolean", "title": "Confirm"},
            "port": {"type": "integer", "title": "Port"}}});
        let (text, options) = question("db", "Set up the database", None, Some(&schema));
        // The fields come in the object's order where serde_json keeps it
        // (the reporter's build does), else in their names': not asserted.
        let mut lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.pop(), Some("(from the MCP server db)"));
        assert_eq!(lines[0], "Set up the database");
        assert!(
            lines[1] == "To fill in: name, Port" || lines[1] == "To fill in: Port, name",
            "{text}"
        );
        let mut labels = labels(&options);
        labels.sort_unstable();
        assert_eq!(
            labels,
            [
                "Confirm: no",
                "Confirm: yes",
                "Region: Europe",
                "Region: us"
            ]
        );
    }

    #[test]
    fn a_page_to_open_is_named_and_an_empty_message_still_reads() {
        let (text, options) = question("", " ", Some("https://example.test/auth"), None);
        assert_eq!(
            text,
            "An MCP server asks for your input\nTo open: https://example.test/auth\n(from an MCP server)"
        );
        assert!(options.is_empty());
    }

    #[test]
    fn options_are_bounded() {
        let many: Vec<String> = (0..100).map(|i| format!("v{i}")).collect();
        let schema = json!({"properties": {"x": {"enum": many}}});
        let (_, options) = question("s", "Pick", None, Some(&schema));
        assert_eq!(options.len(), MAX_OPTIONS);
    }
}
