//! An MCP server asking the person for input through the agent (MCP's
//! elicitation): its message, and the form it asks to be filled. The form
//! is a flat JSON Schema object whose properties are strings, numbers,
//! booleans or choices (`enum`, or `oneOf` of `{const, title}`); a server
//! may instead ask the person to open a page (`mode: "url"`).

use serde_json::Value;

use super::event::str_field;
use crate::report::{QuestionOption, MAX_LABEL_CHARS, MAX_OPTIONS};
use crate::text::truncate_chars;

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
    let (text, options) = form(message, url, schema);
    let from = if server.is_empty() {
        "(from an MCP server)".to_owned()
    } else {
        format!("(from the MCP server {server})")
    };
    (format!("{text}\n{from}"), options)
}

/// The text and options of a form: the message, a line naming the fields
/// that take typed values, the page to open in url mode; each choice of a
/// field an option (prefixed with the field's title when the form has
/// several fields, as a dialog of several questions is).
pub fn form(
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
    (lines.join("\n"), options)
}

/// A field's choices, as the person reads them: an enum's values, a oneOf's
/// titles (or values), a boolean's yes and no; none for a typed value.
fn choices(field: &Value) -> Vec<String> {
    options(field).into_iter().map(|(label, _)| label).collect()
}

/// A field's choices with the value each one sends: an enum's values (or
/// its `enumNames`), a oneOf's or anyOf's titles for their `const`, a
/// boolean's yes and no; an array's are its items'.
fn options(field: &Value) -> Vec<(String, Value)> {
    let word = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    if str_field(field, "type") == Some("array") {
        return field.get("items").map(options).unwrap_or_default();
    }
    if let Some(values) = field.get("enum").and_then(Value::as_array) {
        let names = field.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let name = names.and_then(|n| n.get(i)).and_then(Value::as_str);
                Some((name.map(str::to_owned).or_else(|| word(v))?, v.clone()))
            })
            .collect();
    }
    if let Some(items) = field
        .get("oneOf")
        .or_else(|| field.get("anyOf"))
        .and_then(Value::as_array)
    {
        return items
            .iter()
            .filter_map(|i| {
                let value = i.get("const")?;
                let label = str_field(i, "title")
                    .map(str::to_owned)
                    .or_else(|| word(value))?;
                Some((label, value.clone()))
            })
            .collect();
    }
    match str_field(field, "type") {
        Some("boolean") => vec![
            ("yes".to_owned(), Value::Bool(true)),
            ("no".to_owned(), Value::Bool(false)),
        ],
        _ => Vec::new(),
    }
}

/// A form's fields, by name, in the schema's order.
fn fields(schema: &Value) -> Vec<(&str, &Value)> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, field)| (name.as_str(), field))
        .collect()
}

/// An elicitation's form from `server` as a dialog's questions, one per
/// field, in the shape the card reads (`id`, `header`, `question`,
/// `options`, `multiSelect`, `isOther`): a field with choices takes one of
/// them (several for an array), any other a typed value. The message and
/// who asks are each question's words, so that every card says them.
/// `None` for a form with no field (nothing to choose from afar).
pub fn form_questions(server: &str, message: &str, schema: &Value) -> Option<Vec<Value>> {
    let fields = fields(schema);
    if fields.is_empty() {
        return None;
    }
    let message = match message.trim() {
        "" => "An MCP server asks for your input",
        m => m,
    };
    let asks = if server.is_empty() {
        format!("{message}\n(from an MCP server)")
    } else {
        format!("{message}\n(from the MCP server {server})")
    };
    let several = fields.len() > 1;
    let questions = fields
        .into_iter()
        .map(|(name, field)| {
            let title = str_field(field, "title")
                .filter(|t| !t.is_empty())
                .unwrap_or(name);
            let mut question = if several {
                format!("{asks}\n{title}")
            } else {
                asks.clone()
            };
            if let Some(d) = str_field(field, "description").filter(|d| !d.is_empty()) {
                question.push_str(&format!("\n{d}"));
            }
            let options: Vec<Value> = options(field)
                .into_iter()
                .map(|(label, _)| serde_json::json!({ "label": label }))
                .collect();
            serde_json::json!({
                "id": name,
                "header": title,
                "question": question,
                "multiSelect": str_field(field, "type") == Some("array"),
                "isOther": options.is_empty(),
                "options": options,
            })
        })
        .collect();
    Some(questions)
}

/// The form's content for a dialog's answers (one list per field, as
/// [`form_questions`] asked): each chosen label's value, a typed number as
/// a number, a typed text as it came. `None` when an answer does not fit
/// its field (a label it does not offer, a number that is not one, a
/// required field left out): nothing is sent then.
pub fn form_content(schema: &Value, answers: &[Vec<String>]) -> Option<Value> {
    let fields = fields(schema);
    if fields.len() != answers.len() {
        return None;
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut content = serde_json::Map::new();
    for ((name, field), chosen) in fields.into_iter().zip(answers) {
        if chosen.is_empty() {
            if required.contains(&name) {
                return None;
            }
            continue;
        }
        let offered = options(field);
        // The one value shown as `label`: two choices that read the same
        // (`enumNames` repeated) leave which was meant unknown, and nothing
        // is sent.
        let pick = |label: &String| {
            let mut shown_so = offered.iter().filter(|(l, _)| l == label);
            match (shown_so.next(), shown_so.next()) {
                (Some((_, v)), None) => Some(v.clone()),
                _ => None,
            }
        };
        let value = match (str_field(field, "type"), offered.is_empty(), &chosen[..]) {
            (Some("array"), false, _) => {
                Value::Array(chosen.iter().map(pick).collect::<Option<_>>()?)
            }
            (_, false, [one]) => pick(one)?,
            (Some("integer"), true, [one]) => one.trim().parse::<i64>().ok()?.into(),
            (Some("number"), true, [one]) => {
                serde_json::Number::from_f64(one.trim().parse::<f64>().ok()?)?.into()
            }
            (_, true, [one]) => Value::String(one.clone()),
            _ => return None,
        };
        content.insert(name.to_owned(), value);
    }
    Some(Value::Object(content))
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
    fn a_form_becomes_one_question_per_field_and_its_answers_the_values_it_takes() {
        let schema = json!({"type": "object", "required": ["environment"], "properties": {
            "environment": {"type": "string", "title": "Environment", "enum": ["staging", "production"]}}});
        let questions = form_questions("asker", "Which environment?", &schema).unwrap();
        assert_eq!(
            questions,
            [json!({"id": "environment", "header": "Environment",
                "question": "Which environment?\n(from the MCP server asker)",
                "multiSelect": false, "isOther": false,
                "options": [{"label": "staging"}, {"label": "production"}]})]
        );
        assert_eq!(
            form_content(&schema, &[vec!["production".into()]]),
            Some(json!({"environment": "production"}))
        );
        // Not one of its values, left out while required, or two for one.
        for bad in [
            vec!["prod".to_owned()],
            vec![],
            vec!["staging".into(), "production".into()],
        ] {
            assert_eq!(
                form_content(&schema, std::slice::from_ref(&bad)),
                None,
                "{bad:?}"
            );
        }
        assert_eq!(form_content(&schema, &[]), None);
        assert_eq!(form_questions("s", "m", &json!({"properties": {}})), None);
    }

    #[test]
    fn a_form_s_titled_choices_booleans_lists_and_typed_values_send_their_own_values() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "title": "Region", "oneOf": [
                {"const": "eu", "title": "Europe"}, {"const": "us"}]},
            "confirm": {"type": "boolean"},
            "tags": {"type": "array", "items": {"anyOf": [
                {"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]}},
            "port": {"type": "integer", "description": "Where it listens"},
            "ratio": {"type": "number"},
            "name": {"type": "string"}}});
        let questions = form_questions("", "Set it up", &schema).unwrap();
        let by_id = |id: &str| questions.iter().find(|q| q["id"] == id).unwrap().clone();
        assert_eq!(
            by_id("region")["question"],
            "Set it up\n(from an MCP server)\nRegion"
        );
        assert_eq!(
            by_id("port")["question"],
            "Set it up\n(from an MCP server)\nport\nWhere it listens"
        );
        assert_eq!(by_id("tags")["multiSelect"], true);
        assert_eq!(by_id("name")["isOther"], true);
        let answer = |id: &str| -> Vec<String> {
            match id {
                "region" => vec!["Europe".into()],
                "confirm" => vec!["no".into()],
                "tags" => vec!["Beta".into(), "Alpha".into()],
                "port" => vec![" 8080".into()],
                "ratio" => vec!["0.5".into()],
                _ => vec!["db".into()],
            }
        };
        let answers: Vec<Vec<String>> = questions
            .iter()
            .map(|q| answer(q["id"].as_str().unwrap()))
            .collect();
        assert_eq!(
            form_content(&schema, &answers),
            Some(json!({"region": "eu", "confirm": false, "tags": ["b", "a"],
                "port": 8080, "ratio": 0.5, "name": "db"}))
        );
        let mut bad = answers.clone();
        let port = questions.iter().position(|q| q["id"] == "port").unwrap();
        bad[port] = vec!["eighty".into()];
        assert_eq!(form_content(&schema, &bad), None);
    }

    #[test]
    fn a_choice_that_reads_like_another_sends_nothing() {
        let schema = json!({"type": "object", "properties": {"target": {"type": "string",
            "enum": ["staging", "production"], "enumNames": ["Server", "Server"]}}});
        assert_eq!(form_content(&schema, &[vec!["Server".into()]]), None);
        let told = json!({"type": "object", "properties": {"target": {"type": "string",
            "enum": ["staging", "production"], "enumNames": ["Staging", "Production"]}}});
        assert_eq!(
            form_content(&told, &[vec!["Production".into()]]),
            Some(json!({"target": "production"}))
        );
    }

    #[test]
    fn options_are_bounded() {
        let many: Vec<String> = (0..100).map(|i| format!("v{i}")).collect();
        let schema = json!({"properties": {"x": {"enum": many}}});
        let (_, options) = question("s", "Pick", None, Some(&schema));
        assert_eq!(options.len(), MAX_OPTIONS);
    }
}
