//! The `elicit` prompt word: a form (`elicitation/create`, form mode) asking the user for a
//! name and optional details, sent only to a client that advertised `elicitation.form`; and
//! the `link` prompt word: a URL elicitation, sent only to a client that advertised
//! `elicitation.url`, then completed (`elicitation/complete`) when accepted.

use acp_blocking::acp_proto::types::*;
use acp_blocking::{Error, PromptContext};

/// Whether `text` contains the word `elicit` (any case, delimited by non-alphanumerics).
pub fn is_elicit(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|w| w.eq_ignore_ascii_case("elicit"))
}

/// Whether `text` contains the word `link` (any case, delimited by non-alphanumerics).
pub fn is_link(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|w| w.eq_ignore_ascii_case("link"))
}

/// The form: `name` (a string of 1 to 40 characters, required), `count` (an integer from 1
/// to 10), `colour` (one of `red`, `green`, `blue`), `subscribe` (a boolean) and `greeting`
/// (a string, default `hello`); the form's title is `About you`.
pub fn form_schema() -> ElicitationSchema {
    use ElicitationPropertySchema as P;
    let name = StringPropertySchema {
        title: Some("Your name".to_owned()),
        min_length: Some(1),
        max_length: Some(40),
        ..Default::default()
    };
    let count = IntegerPropertySchema {
        title: Some("How many".to_owned()),
        minimum: Some(1),
        maximum: Some(10),
        ..Default::default()
    };
    let colours = ["red", "green", "blue"].map(|c| EnumOption::new(c, c[..1].to_uppercase() + &c[1..]));
    let colour = StringPropertySchema {
        title: Some("Favourite colour".to_owned()),
        one_of: Some(colours.to_vec()),
        ..Default::default()
    };
    let subscribe = BooleanPropertySchema {
        title: Some("Subscribe".to_owned()),
        description: Some("Send me the news.".to_owned()),
        ..Default::default()
    };
    let greeting = StringPropertySchema {
        title: Some("Greeting".to_owned()),
        default: Some("hello".to_owned()),
        ..Default::default()
    };
    let mut schema = ElicitationSchema::new()
        .field("name", P::String(name), true)
        .field("count", P::Integer(count), false)
        .field("colour", P::String(colour), false)
        .field("subscribe", P::Boolean(subscribe), false)
        .field("greeting", P::String(greeting), false);
    schema.title = Some("About you".to_owned());
    schema
}

/// The URL the `link` word asks the user to open.
pub const LINK_URL: &str = "https://example.org/acp-reference/sign-in";

/// Asks the user to open [`LINK_URL`] and says what came back, as the text of an
/// `agent_message_chunk`: `url accepted` (after an `elicitation/complete` for it), `url
/// declined`, `url cancelled`, or `no url: the client did not advertise elicitation.url`.
pub(super) fn ask_url(cx: &PromptContext, id: &str) -> Result<String, Error> {
    let response = match cx.elicit_url("Sign in to continue", id, LINK_URL) {
        Ok(response) => response,
        Err(Error::Send(_)) => return Ok("no url: the client did not advertise elicitation.url".to_owned()),
        Err(e) => return Err(e),
    };
    Ok(match response.action {
        ElicitationAction::Accept(_) => {
            cx.complete_elicitation(id)?;
            "url accepted".to_owned()
        }
        ElicitationAction::Decline => "url declined".to_owned(),
        _ => "url cancelled".to_owned(),
    })
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
