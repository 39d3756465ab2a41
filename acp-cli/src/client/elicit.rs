//! Elicitations from the agent (`elicitation/create`, `elicitation/complete`).
//!
//! * A form is answered from the `--elicit FILE.json` answers (a JSON object of field name
//!   to value): accepted with the values of the fields the form declares, when each has the
//!   declared type and every required field has one; otherwise, or without `--elicit`,
//!   declined. The client advertises `elicitation.form` only with `--elicit`.
//! * A URL elicitation is shown (message, URL, id) for the user to open, and accepted; its
//!   `elicitation/complete` is shown too. `elicitation.url` is always advertised.
//!
//! Everything is drawn by the UI thread (an [`ElicitNote`] through the UI queue).

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
    let size = std::fs::metadata(path).map_err(|e| format!("--elicit {shown}: {e}"))?.len();
    if size > MAX_ANSWERS_BYTES {
        return Err(format!("--elicit {shown}: larger than {MAX_ANSWERS_BYTES} bytes"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("--elicit {shown}: {e}"))?;
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
    /// A URL to open.
    Url { message: String, url: String, id: String },
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

/// The form's fields filled from `answers`, or why they cannot be.
fn fill(schema: &ElicitationSchema, answers: &Answers) -> Result<BTreeMap<String, ElicitationContentValue>, String> {
    let mut content = BTreeMap::new();
    for (name, property) in &schema.properties {
        let Some(value) = answers.get(name) else { continue };
        let value = typed(property, value).ok_or_else(|| format!("the answer for `{name}` is not of its type"))?;
        content.insert(name.clone(), value);
    }
    for name in schema.required.iter().flatten() {
        if !content.contains_key(name) {
            return Err(format!("no answer for the required `{name}`"));
        }
    }
    Ok(content)
}

/// `value` as the type `property` declares, if it has it.
fn typed(property: &ElicitationPropertySchema, value: &Value) -> Option<ElicitationContentValue> {
    use ElicitationContentValue as V;
    match (property, value) {
        (ElicitationPropertySchema::String(_), Value::String(s)) => Some(V::String(s.clone())),
        (ElicitationPropertySchema::Boolean(_), Value::Bool(b)) => Some(V::Boolean(*b)),
        (ElicitationPropertySchema::Integer(_), Value::Number(n)) => n.as_i64().map(V::Integer),
        (ElicitationPropertySchema::Number(_), Value::Number(n)) => n.as_f64().map(V::Number),
        (ElicitationPropertySchema::Array(_), Value::Array(items)) => {
            items.iter().map(|i| i.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>().map(V::StringArray)
        }
        _ => None,
    }
}
