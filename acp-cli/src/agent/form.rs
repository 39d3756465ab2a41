//! The `elicit` prompt word: a form (`elicitation/create`, form mode) asking the user for a
//! name and an optional count, sent only to a client that advertised `elicitation.form`.

use acp_blocking::acp_proto::types::*;
use acp_blocking::{Error, PromptContext};

/// Whether `text` contains the word `elicit` (any case, delimited by non-alphanumerics).
pub fn is_elicit(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|w| w.eq_ignore_ascii_case("elicit"))
}

/// The form: `name` (a string, required) and `count` (an integer).
pub fn form_schema() -> ElicitationSchema {
    let name = StringPropertySchema { title: Some("Your name".to_owned()), ..Default::default() };
    let count = IntegerPropertySchema { title: Some("How many".to_owned()), ..Default::default() };
    ElicitationSchema::new().field("name", ElicitationPropertySchema::String(name), true).field(
        "count",
        ElicitationPropertySchema::Integer(count),
        false,
    )
}

/// Asks the form and says what came back, as the text of an `agent_message_chunk`:
/// `form accepted: name="Ada" count=3` (the fields in name order, as JSON values), `form
/// declined`, `form cancelled`, or `no form: the client did not advertise elicitation.form`.
/// Errors when the turn is cancelled or the connection fails.
pub(super) fn ask_form(cx: &PromptContext) -> Result<String, Error> {
    let response = match cx.elicit("Who is asking?", form_schema()) {
        Ok(response) => response,
        Err(Error::Send(_)) => return Ok("no form: the client did not advertise elicitation.form".to_owned()),
        Err(e) => return Err(e),
    };
    Ok(match response.action {
        ElicitationAction::Accept(accept) => {
            let fields: Vec<String> = accept
                .content
                .iter()
                .flatten()
                .map(|(name, value)| format!("{name}={}", serde_json::to_string(value).unwrap_or_default()))
                .collect();
            format!("form accepted: {}", fields.join(" "))
        }
        ElicitationAction::Decline => "form declined".to_owned(),
        _ => "form cancelled".to_owned(),
    })
}
