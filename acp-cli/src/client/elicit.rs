//! Elicitations from the agent (`elicitation/create`, `elicitation/complete`).
//!
//! * A form is answered from the `--elicit FILE.json` answers (a JSON object of field name
//!   to value) when the flag is given: accepted with the values of the fields the form
//!   declares, when each passes [`check`] (its type and constraints) and every required field
//!   has one; otherwise declined.
//! * Without `--elicit`, on a terminal (stdin, and stdout or stderr), a form is filled there
//!   field by field (see `form`), its answers checked by the same [`fill`] and [`check`].
//! * Neither: forms are not advertised (`elicitation.form`), and one sent anyway is declined.
//! * A URL elicitation (`elicitation.url` is always advertised) is shown (message, URL, id),
//!   inert; on a terminal the user accepts (`y`, having opened it) or declines (`n`), and
//!   Ctrl-C cancels; elsewhere it is declined, since nobody could open it. Its
//!   `elicitation/complete` is shown too.
//!
//! Everything is drawn by the UI thread (an [`ElicitNote`] through the UI queue, or the
//! question itself, queued behind the questions asked before it).

use std::collections::BTreeMap;
use std::path::Path;

use acp_blocking::acp_proto::types::*;
use serde_json::{Map, Value};

/// The largest `--elicit` file read.
const MAX_ANSWERS_BYTES: u64 = 1 << 20;

/// The `--elicit` answers: field name to value.
pub(crate) type Answers = Map<String, Value>;

/// Reads the `--elicit` file: a JSON object.
pub(crate) fn load_answers(path: &Path) -> Result<Answers, String> {
    let shown = path.display();
    let text =
        crate::files::read_regular_text(path, MAX_ANSWERS_BYTES).map_err(|e| format!("--elicit {shown}: {e}"))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(answers)) => Ok(answers),
        Ok(_) => Err(format!("--elicit {shown}: not a JSON object of field names to values")),
        Err(e) => Err(format!("--elicit {shown}: {e}")),
    }
}

/// What the transcript shows of an elicitation.
#[derive(Debug, Clone)]
pub(crate) enum ElicitNote {
    /// A form and what was answered: `Ok(the fields sent)` or `Err(why declined)`.
    Form { message: String, outcome: Result<Vec<String>, String> },
    /// A URL to open, declined (why) because nobody can be asked.
    Url { message: String, url: String, id: String, declined: String },
    /// `elicitation/complete`.
    Completed { id: String },
}

/// The answer to a form, and the note for the transcript.
pub(crate) fn answer_form(
    message: &str,
    schema: &ElicitationSchema,
    answers: Option<&Answers>,
) -> (CreateElicitationResponse, ElicitNote) {
    let outcome = match answers {
        None => Err("no --elicit file".to_owned()),
        Some(answers) => fill(schema, answers),
    };
    let response = match &outcome {
        Ok(content) => CreateElicitationResponse::accept(content.clone()),
        Err(_) => CreateElicitationResponse::decline(),
    };
    let outcome = outcome.map(|content| content.keys().cloned().collect());
    (response, ElicitNote::Form { message: message.to_owned(), outcome })
}

/// The form's fields filled from `answers` (each checked by [`check`]), or why they cannot
/// be: the one checker of both `--elicit` and the forms filled on the terminal.
pub(crate) fn fill(
    schema: &ElicitationSchema,
    answers: &Answers,
) -> Result<BTreeMap<String, ElicitationContentValue>, String> {
    let mut content = BTreeMap::new();
    for (name, property) in &schema.properties {
        let Some(value) = answers.get(name) else { continue };
        let value = check(property, value).map_err(|why| format!("the answer for `{name}` {why}"))?;
        content.insert(name.clone(), value);
    }
    for name in schema.required.iter().flatten() {
        if !content.contains_key(name) {
            return Err(format!("no answer for the required `{name}`"));
        }
    }
    Ok(content)
}

/// `value` as the field `property` declares it, checked against its constraints: a string's
/// length (in characters), `format` (`email`, `uri`, `date`, `date-time`, by their shape) and
/// choices (`enum`, `oneOf`); a number's or an integer's bounds; a multi-select's choices and
/// number of items. A `pattern` is not checked (the client has no regular expressions).
/// The error says why, after "the answer for `NAME`".
pub(crate) fn check(property: &ElicitationPropertySchema, value: &Value) -> Result<ElicitationContentValue, String> {
    use ElicitationContentValue as V;
    use ElicitationPropertySchema as P;
    let wrong = || "is not of its type".to_owned();
    match (property, value) {
        (P::String(field), Value::String(s)) => check_string(field, s).map(|()| V::String(s.clone())),
        (P::Boolean(_), Value::Bool(b)) => Ok(V::Boolean(*b)),
        (P::Integer(field), Value::Number(n)) => {
            let n = n.as_i64().ok_or_else(wrong)?;
            within(n, field.minimum, field.maximum).map(|()| V::Integer(n))
        }
        (P::Number(field), Value::Number(n)) => {
            let n = n.as_f64().filter(|n| n.is_finite()).ok_or_else(wrong)?;
            within(n, field.minimum, field.maximum).map(|()| V::Number(n))
        }
        (P::Array(field), Value::Array(items)) => {
            let items = items.iter().map(|i| i.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>();
            let items = items.ok_or_else(wrong)?;
            check_items(field, &items).map(|()| V::StringArray(items))
        }
        _ => Err(wrong()),
    }
}

/// Whether `n` lies within the bounds.
fn within<T: PartialOrd + std::fmt::Display + Copy>(n: T, min: Option<T>, max: Option<T>) -> Result<(), String> {
    match (min, max) {
        (Some(min), _) if n < min => Err(format!("is less than {min}")),
        (_, Some(max)) if n > max => Err(format!("is more than {max}")),
        _ => Ok(()),
    }
}

/// The choices of a single-choice string field (`enum`, else `oneOf`), if it has some.
pub(crate) fn choices(field: &StringPropertySchema) -> Option<Vec<(&str, Option<&str>)>> {
    if let Some(values) = &field.enum_ {
        return Some(values.iter().map(|v| (v.as_str(), None)).collect());
    }
    field.one_of.as_ref().map(|options| options.iter().map(|o| (o.const_.as_str(), Some(o.title.as_str()))).collect())
}

/// The choices of a multi-select; `None` when its kind is unknown (any string goes).
pub(crate) fn item_choices(field: &MultiSelectPropertySchema) -> Option<Vec<(&str, Option<&str>)>> {
    match &field.items {
        MultiSelectItems::String(items) => Some(items.enum_.iter().map(|v| (v.as_str(), None)).collect()),
        MultiSelectItems::Titled(items) => {
            Some(items.any_of.iter().map(|o| (o.const_.as_str(), Some(o.title.as_str()))).collect())
        }
        _ => None,
    }
}

fn check_string(field: &StringPropertySchema, s: &str) -> Result<(), String> {
    if let Some(choices) = choices(field) {
        return match choices.iter().any(|(value, _)| *value == s) {
            true => Ok(()),
            false => Err("is not one of the choices".to_owned()),
        };
    }
    let length = s.chars().count();
    match (field.min_length, field.max_length) {
        (Some(min), _) if length < min as usize => return Err(format!("is shorter than {min} characters")),
        (_, Some(max)) if length > max as usize => return Err(format!("is longer than {max} characters")),
        _ => {}
    }
    let Some(format) = &field.format else { return Ok(()) };
    let ok = match format {
        StringFormat::Email => is_email(s),
        StringFormat::Uri => is_uri(s),
        StringFormat::Date => is_date(s),
        StringFormat::DateTime => s.split_once(['T', 't']).is_some_and(|(d, t)| is_date(d) && is_time(t)),
        // A format this client does not know: not checked.
        _ => true,
    };
    if ok { Ok(()) } else { Err(format!("is not a valid {}", format.as_str())) }
}

fn check_items(field: &MultiSelectPropertySchema, items: &[String]) -> Result<(), String> {
    if let Some(choices) = item_choices(field)
        && let Some(bad) = items.iter().find(|i| !choices.iter().any(|(value, _)| value == i))
    {
        return Err(format!("has `{bad}`, which is not one of the choices"));
    }
    within(items.len() as u64, field.min_items, field.max_items).map_err(|why| format!("{why} items"))
}

/// `local@domain.tld`, without spaces.
fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else { return false };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains('@')
        && !s.contains(char::is_whitespace)
}

/// `scheme:rest`, without spaces.
fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        && !rest.is_empty()
        && !s.contains(char::is_whitespace)
}

/// `YYYY-MM-DD`.
fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let number = |p: &str, len: usize| {
        (p.len() == len && p.bytes().all(|b| b.is_ascii_digit())).then(|| p.parse::<u32>().ok()).flatten()
    };
    match parts[..] {
        [y, m, d] => {
            number(y, 4).is_some()
                && number(m, 2).is_some_and(|m| (1..=12).contains(&m))
                && number(d, 2).is_some_and(|d| (1..=31).contains(&d))
        }
        _ => false,
    }
}

/// `HH:MM:SS`, then fractions and an offset or `Z`.
fn is_time(s: &str) -> bool {
    let b = s.as_bytes();
    let two = |at: usize, max: u8| {
        b.get(at..at + 2).is_some_and(|d| d.iter().all(u8::is_ascii_digit) && (d[0] - b'0') * 10 + (d[1] - b'0') <= max)
    };
    two(0, 23) && b.get(2) == Some(&b':') && two(3, 59) && b.get(5) == Some(&b':') && two(6, 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn property(value: Value) -> ElicitationPropertySchema {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn the_checker_applies_types_and_constraints() {
        let name = property(json!({"type": "string", "minLength": 2, "maxLength": 4}));
        assert!(check(&name, &json!("Ada")).is_ok());
        assert_eq!(check(&name, &json!("A")).unwrap_err(), "is shorter than 2 characters");
        assert_eq!(check(&name, &json!("Adaline")).unwrap_err(), "is longer than 4 characters");
        assert_eq!(check(&name, &json!(3)).unwrap_err(), "is not of its type");
        let count = property(json!({"type": "integer", "minimum": 1, "maximum": 10}));
        assert_eq!(check(&count, &json!(11)).unwrap_err(), "is more than 10");
        assert_eq!(check(&count, &json!(0)).unwrap_err(), "is less than 1");
        assert!(matches!(check(&count, &json!(10)), Ok(ElicitationContentValue::Integer(10))));
        assert_eq!(check(&count, &json!(2.5)).unwrap_err(), "is not of its type");
        let ratio = property(json!({"type": "number", "maximum": 1.0}));
        assert_eq!(check(&ratio, &json!(1.5)).unwrap_err(), "is more than 1");
        let colour = property(json!({"type": "string", "oneOf": [{"const": "r", "title": "Red"}]}));
        assert!(check(&colour, &json!("r")).is_ok());
        assert_eq!(check(&colour, &json!("Red")).unwrap_err(), "is not one of the choices");
        let tags = property(json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 1}));
        assert!(check(&tags, &json!(["a"])).is_ok());
        assert_eq!(check(&tags, &json!(["a", "b"])).unwrap_err(), "is more than 1 items");
        assert_eq!(check(&tags, &json!(["c"])).unwrap_err(), "has `c`, which is not one of the choices");
    }

    #[test]
    fn formats_are_checked_by_their_shape() {
        let format = |f: &str, s: &str| check(&property(json!({"type": "string", "format": f})), &json!(s)).is_ok();
        assert!(format("email", "ada@example.org") && !format("email", "ada@") && !format("email", "a b@c.d"));
        assert!(format("uri", "https://example.org/x") && !format("uri", "example") && !format("uri", "1a:b"));
        assert!(format("date", "2026-12-02") && !format("date", "2026-13-02") && !format("date", "26-12-02"));
        assert!(format("date-time", "2026-12-02T11:30:00Z") && !format("date-time", "2026-12-02 11:30"));
    }
}
