//! A form (`elicitation/create`, form mode) filled on the terminal, field by field.
//!
//! Each field is asked in turn (in name order) with its title, description, type and
//! constraints; the typed line is read as the field's type ([`read_answer`]), then checked by
//! the same checker as `--elicit` ([`super::elicit::check`]): a wrong answer is explained and
//! asked again. Enter takes the default (if any), skips an optional field, and is refused for
//! a required one; `-` skips an optional field even when it has a default. At the end the
//! answers are shown and the user types `a` (accept: checked once more, whole, by
//! [`super::elicit::fill`]), `d` (decline) or `c` (cancel); Ctrl-C cancels at any
//! point, the end of input too.
//!
//! A form with more than [`MAX_FIELDS`] fields, or a field with more than [`MAX_CHOICES`]
//! choices, or a required field of a kind this client does not know, is declined without
//! being shown: the terminal shows a bounded amount of the
//! peer's text (each title, description and choice is also cut to a bounded length when
//! drawn, see `render::elicitation`).

use acp_blocking::acp_proto::types::*;
use serde_json::{Map, Number, Value};

use super::elicit::{check, choices, fill, item_choices};

/// The most fields a form may have to be asked on the terminal.
pub(crate) const MAX_FIELDS: usize = 64;
/// The most choices a field may offer to be asked on the terminal.
pub(crate) const MAX_CHOICES: usize = 64;

/// A form being filled: the fields to ask, the answers so far.
#[derive(Debug)]
pub(crate) struct Fill {
    /// The fields' names, in the order asked.
    pub(crate) fields: Vec<String>,
    /// The field being asked; `fields.len()`: the final question (accept, decline, cancel).
    pub(crate) at: usize,
    pub(crate) answers: Map<String, Value>,
}

/// What a typed line did to the form.
#[derive(Debug)]
pub(crate) enum Step {
    /// Not an answer: why (the same question is asked again).
    Again(String),
    /// The next question.
    Next,
    /// The form is answered.
    Done(CreateElicitationResponse),
}

impl Fill {
    /// Starts filling the form, or says why it is declined (too big for the terminal).
    pub(crate) fn new(schema: &ElicitationSchema) -> Result<Fill, String> {
        if schema.properties.len() > MAX_FIELDS {
            return Err(format!("the form has {} fields, more than {MAX_FIELDS}", schema.properties.len()));
        }
        for (name, property) in &schema.properties {
            let shown: String = name.chars().take(40).collect();
            if matches!(property, ElicitationPropertySchema::Unknown(_)) && is_required(schema, name) {
                return Err(format!("the required field `{shown}` is of a kind this client does not know"));
            }
            let n = match property {
                ElicitationPropertySchema::String(field) => choices(field).map_or(0, |c| c.len()),
                ElicitationPropertySchema::Array(field) => item_choices(field).map_or(0, |c| c.len()),
                _ => 0,
            };
            if n > MAX_CHOICES {
                return Err(format!("the field `{shown}` has {n} choices, more than {MAX_CHOICES}"));
            }
        }
        Ok(Fill { fields: schema.properties.keys().cloned().collect(), at: 0, answers: Map::new() })
    }

    /// The field being asked, if the form is not at its final question.
    pub(crate) fn current<'s>(&self, schema: &'s ElicitationSchema) -> Option<(&str, &'s ElicitationPropertySchema)> {
        let name = self.fields.get(self.at)?;
        schema.properties.get(name).map(|p| (name.as_str(), p))
    }

    /// Takes a typed line as the answer to the current question.
    pub(crate) fn take(&mut self, schema: &ElicitationSchema, line: &str) -> Step {
        let Some((name, property)) = self.current(schema) else { return self.decide(schema, line) };
        let required = is_required(schema, name);
        let name = name.to_owned();
        match read_answer(property, line, required) {
            Ok(Some(value)) => match check(property, &value) {
                Ok(_) => {
                    self.answers.insert(name, value);
                }
                Err(why) => return Step::Again(format!("the answer {why}")),
            },
            Ok(None) => {
                self.answers.remove(&name);
            }
            Err(why) => return Step::Again(why),
        }
        self.at += 1;
        Step::Next
    }

    /// The final question: accept, decline or cancel.
    fn decide(&mut self, schema: &ElicitationSchema, line: &str) -> Step {
        match line.trim().to_ascii_lowercase().as_str() {
            "a" | "accept" | "y" | "yes" => match fill(schema, &self.answers) {
                Ok(content) => Step::Done(CreateElicitationResponse::accept(content)),
                Err(why) => Step::Again(why),
            },
            "d" | "decline" | "n" | "no" => Step::Done(CreateElicitationResponse::decline()),
            "c" | "cancel" => Step::Done(CreateElicitationResponse::cancel()),
            _ => Step::Again("type a (accept), d (decline) or c (cancel)".to_owned()),
        }
    }
}

/// Whether the form requires `name`.
pub(crate) fn is_required(schema: &ElicitationSchema, name: &str) -> bool {
    schema.required.iter().flatten().any(|r| r == name)
}

/// The default value of a field, as JSON.
pub(crate) fn default_of(property: &ElicitationPropertySchema) -> Option<Value> {
    match property {
        ElicitationPropertySchema::String(f) => f.default.clone().map(Value::String),
        ElicitationPropertySchema::Number(f) => f.default.and_then(Number::from_f64).map(Value::Number),
        ElicitationPropertySchema::Integer(f) => f.default.map(Value::from),
        ElicitationPropertySchema::Boolean(f) => f.default.map(Value::Bool),
        ElicitationPropertySchema::Array(f) => f.default.clone().map(Value::from),
        _ => None,
    }
}

/// A typed line read as the field's type: `Ok(None)` leaves the field out (Enter on an
/// optional field without a default, or `-`). A choice is its number or its value or label
/// (any case); a multi-select takes several, separated by commas; a boolean `y`/`n`.
pub(crate) fn read_answer(
    property: &ElicitationPropertySchema,
    line: &str,
    required: bool,
) -> Result<Option<Value>, String> {
    use ElicitationPropertySchema as P;
    let typed = line.trim();
    if typed.is_empty() {
        return match (default_of(property), required) {
            (Some(value), _) => Ok(Some(value)),
            (None, false) => Ok(None),
            (None, true) => Err("this field is required".to_owned()),
        };
    }
    if typed == "-" && !required {
        return Ok(None);
    }
    let value = match property {
        P::String(field) => match choices(field) {
            Some(choices) => Value::String(pick(&choices, typed)?.to_owned()),
            // Text as typed (not trimmed): spaces may matter.
            None => Value::String(line.to_owned()),
        },
        P::Integer(_) => Value::from(typed.parse::<i64>().map_err(|_| "type a whole number".to_owned())?),
        P::Number(_) => {
            let n = typed.parse::<f64>().ok().and_then(Number::from_f64);
            Value::Number(n.ok_or_else(|| "type a number".to_owned())?)
        }
        P::Boolean(_) => match typed.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Value::Bool(true),
            "n" | "no" | "false" => Value::Bool(false),
            _ => return Err("type y or n".to_owned()),
        },
        P::Array(field) => {
            let parts = typed.split(',').map(str::trim).filter(|p| !p.is_empty());
            let picked: Result<Vec<Value>, String> = match item_choices(field) {
                Some(choices) => parts.map(|p| pick(&choices, p).map(|v| Value::String(v.to_owned()))).collect(),
                None => Ok(parts.map(|p| Value::String(p.to_owned())).collect()),
            };
            Value::Array(picked?)
        }
        _ => return Err("this client cannot fill a field of this kind".to_owned()),
    };
    Ok(Some(value))
}

/// The choice `typed` names: its number (1-based), value or label (any case).
fn pick<'a>(choices: &[(&'a str, Option<&str>)], typed: &str) -> Result<&'a str, String> {
    if let Ok(n) = typed.parse::<usize>()
        && let Some((value, _)) = n.checked_sub(1).and_then(|i| choices.get(i))
    {
        return Ok(value);
    }
    let lower = typed.to_lowercase();
    choices
        .iter()
        .find(|(value, title)| value.to_lowercase() == lower || title.is_some_and(|t| t.to_lowercase() == lower))
        .map(|(value, _)| *value)
        .ok_or_else(|| format!("choose 1-{} (or type a choice)", choices.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> ElicitationSchema {
        serde_json::from_value(json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 2},
            "count": {"type": "integer", "minimum": 1, "maximum": 10},
            "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
            "ok": {"type": "boolean", "default": true},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        }}))
        .unwrap()
    }

    #[test]
    fn a_form_is_filled_field_by_field_and_wrong_answers_are_asked_again() {
        let schema = schema();
        let mut fill = Fill::new(&schema).unwrap();
        // colour, count, name, ok, tags (name order).
        assert!(matches!(fill.take(&schema, "purple"), Step::Again(why) if why == "choose 1-2 (or type a choice)"));
        assert!(matches!(fill.take(&schema, "2"), Step::Next));
        assert!(matches!(fill.take(&schema, "11"), Step::Again(why) if why == "the answer is more than 10"));
        assert!(matches!(fill.take(&schema, "x"), Step::Again(why) if why == "type a whole number"));
        assert!(matches!(fill.take(&schema, "3"), Step::Next));
        assert!(matches!(fill.take(&schema, ""), Step::Again(why) if why == "this field is required"));
        assert!(matches!(fill.take(&schema, "Ada"), Step::Next));
        assert!(matches!(fill.take(&schema, ""), Step::Next), "the default");
        assert!(matches!(fill.take(&schema, "a, c"), Step::Again(_)), "no such choice");
        assert!(matches!(fill.take(&schema, "a, 2"), Step::Next));
        assert!(matches!(fill.take(&schema, "maybe"), Step::Again(_)));
        let Step::Done(response) = fill.take(&schema, "a") else { panic!("not done") };
        let sent = serde_json::to_value(&response).unwrap();
        let content = json!({"colour": "g", "count": 3, "name": "Ada", "ok": true, "tags": ["a", "b"]});
        assert_eq!(sent, json!({"action": "accept", "content": content}));
    }

    #[test]
    fn optional_fields_are_skipped_and_the_form_declined_or_cancelled() {
        let schema = schema();
        let mut fill = Fill::new(&schema).unwrap();
        for line in ["", "", "Ada", "-", ""] {
            assert!(matches!(fill.take(&schema, line), Step::Next), "{line:?}");
        }
        assert!(fill.answers.keys().eq(["name"]), "{:?}", fill.answers);
        let Step::Done(declined) = fill.take(&schema, "d") else { panic!() };
        assert!(matches!(declined.action, ElicitationAction::Decline));
        fill.at = fill.fields.len();
        let Step::Done(cancelled) = fill.take(&schema, "cancel") else { panic!() };
        assert!(matches!(cancelled.action, ElicitationAction::Cancel));
    }

    #[test]
    fn a_form_too_big_for_the_terminal_is_refused() {
        let mut big = ElicitationSchema::new();
        for i in 0..=MAX_FIELDS {
            big = big.field(format!("f{i}"), ElicitationPropertySchema::Boolean(Default::default()), false);
        }
        assert_eq!(Fill::new(&big).unwrap_err(), format!("the form has 65 fields, more than {MAX_FIELDS}"));
        let options: Vec<EnumOption> = (0..=MAX_CHOICES).map(|i| EnumOption::new(i.to_string(), "x")).collect();
        let field = StringPropertySchema { one_of: Some(options), ..Default::default() };
        let wide = ElicitationSchema::new().field("pick", ElicitationPropertySchema::String(field), true);
        assert!(Fill::new(&wide).unwrap_err().contains("has 65 choices"));
        let odd: ElicitationSchema = serde_json::from_value(json!({"type": "object", "required": ["when"],
            "properties": {"when": {"type": "time"}}}))
        .unwrap();
        assert_eq!(Fill::new(&odd).unwrap_err(), "the required field `when` is of a kind this client does not know");
    }
}
