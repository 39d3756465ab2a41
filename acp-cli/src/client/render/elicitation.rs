//! Drawing elicitations (see [`crate::client::elicit`]): the form's message and what was
//! answered, a form asked field by field (see [`crate::client::form`]), a URL to open, a URL
//! elicitation's completion. Peer text goes through the sanitizing writers of the parent
//! module, each piece cut to a bounded length ([`MAX_TEXT`], [`MAX_MESSAGE`]).

use acp_blocking::acp_proto::types::*;

use super::{Renderer, shorten};
use crate::client::elicit::{ElicitNote, choices, item_choices};
use crate::client::form::{Fill, default_of, is_required};

/// The most characters of a title, description, field name or choice drawn.
pub(crate) const MAX_TEXT: usize = 200;
/// The most characters of an elicitation's message drawn.
pub(crate) const MAX_MESSAGE: usize = 1000;

impl Renderer {
    /// An elicitation and its outcome.
    pub(crate) fn elicitation(&mut self, note: &ElicitNote) {
        match note {
            ElicitNote::Form { message, outcome } => {
                self.line(&[("1;33", "? form:"), ("", " "), ("1", &shorten(message, MAX_MESSAGE))]);
                match outcome {
                    Ok(fields) => {
                        let sent = format!("({})", fields.join(", "));
                        self.line(&[("", "  → "), ("1", "accepted"), ("", " "), ("2", "--elicit "), ("2", &sent)]);
                    }
                    Err(why) => self.elicit_decided("declined", why),
                }
            }
            ElicitNote::Url { message, url, id, declined } => {
                self.url_elicitation(message, url, id);
                self.elicit_decided("declined", declined);
            }
            ElicitNote::Completed { id } => self.info(&format!("elicitation {} completed", shorten(id, MAX_TEXT))),
        }
    }

    /// A URL elicitation: the URL and the message.
    fn url_elicitation(&mut self, message: &str, url: &str, id: &str) {
        self.loudly(|r| {
            r.line(&[("1;33", "? open:"), ("", " "), ("1", &shorten(url, MAX_MESSAGE))]);
            let id = format!(" (elicitation {})", shorten(id, MAX_TEXT));
            r.line(&[("", "  "), ("", &shorten(message, MAX_MESSAGE)), ("2", &id)]);
        });
    }

    /// A URL elicitation asked on the terminal.
    pub(crate) fn url_question(&mut self, message: &str, url: &str, id: &str) {
        self.waiting(None);
        self.url_elicitation(message, url, id);
        self.input_prompt("  opened it? accept (y) or decline (n); Ctrl-C cancels: ");
    }

    /// A form about to be asked: its message, title, description, and how to answer.
    pub(crate) fn form_opened(&mut self, message: &str, schema: &ElicitationSchema) {
        self.waiting(None);
        self.loudly(|r| {
            r.line(&[("1;33", "? form:"), ("", " "), ("1", &shorten(message, MAX_MESSAGE))]);
            if let Some(title) = &schema.title {
                r.line(&[("", "  "), ("1", &shorten(title, MAX_TEXT))]);
            }
            if let Some(description) = &schema.description {
                r.line(&[("", "  "), ("", &shorten(description, MAX_MESSAGE))]);
            }
            r.line(&[(
                "2",
                "  Enter takes the default or skips an optional field, - skips it; Ctrl-C cancels the form",
            )]);
        });
    }

    /// The question of the form's current step: a field, or accept/decline/cancel.
    pub(crate) fn form_step(&mut self, schema: &ElicitationSchema, fill: &Fill) {
        let Some((name, property)) = fill.current(schema) else {
            let answers: Vec<String> = fill.answers.iter().map(|(k, v)| format!("{}={v}", shorten(k, 40))).collect();
            let answers = shorten(&answers.join(" "), MAX_MESSAGE).into_owned();
            self.loudly(|r| r.line(&[("", "  answers: "), ("", &answers)]));
            self.input_prompt("  accept (a), decline (d) or cancel (c): ");
            return;
        };
        let (title, description) = titles(property);
        let label = shorten(title.unwrap_or(name), MAX_TEXT);
        let mut about = vec![format!("{}", shorten(name, 40))];
        if is_required(schema, name) {
            about.push("required".to_owned());
        }
        about.push(kind(property));
        if let Some(default) = default_of(property) {
            about.push(format!("default {}", shorten(&default.to_string(), MAX_TEXT)));
        }
        let step = format!("  [{}/{}] ", fill.at + 1, fill.fields.len());
        let about = format!(" ({})", about.join(" · "));
        self.loudly(|r| {
            r.line(&[("1", &step), ("1", &label), ("2", &about)]);
            if let Some(description) = description {
                r.line(&[("", "    "), ("", &shorten(description, MAX_TEXT))]);
            }
            let listed = match property {
                ElicitationPropertySchema::String(f) => choices(f),
                ElicitationPropertySchema::Array(f) => item_choices(f),
                _ => None,
            };
            for (i, (value, title)) in listed.into_iter().flatten().enumerate() {
                let shown = shorten(title.unwrap_or(value), MAX_TEXT);
                r.line(&[("", &format!("    [{}] ", i + 1)), ("", &shown)]);
            }
        });
        self.input_prompt(&format!("  {}: ", shorten(name, 40)));
    }

    /// Why an answer was not taken, before the question is asked again.
    pub(crate) fn form_again(&mut self, why: &str) {
        self.warn(&format!("  {why}"));
    }

    /// What became of an elicitation asked on the terminal.
    pub(crate) fn elicit_decided(&mut self, action: &str, why: &str) {
        self.loudly(|r| r.line(&[("", "  → "), ("1", action), ("", " "), ("2", "("), ("2", why), ("2", ")")]));
    }

    /// An input line's label (the answer is typed at the editor's prompt, or after it).
    fn input_prompt(&mut self, label: &str) {
        self.loudly(|r| {
            r.newline_if_needed();
            r.raw(&[("1", label)]);
            if r.editor_prompt {
                r.write_out("\n");
            }
        });
    }
}

/// A field's title and description.
fn titles(property: &ElicitationPropertySchema) -> (Option<&str>, Option<&str>) {
    use ElicitationPropertySchema as P;
    let (title, description) = match property {
        P::String(f) => (&f.title, &f.description),
        P::Number(f) => (&f.title, &f.description),
        P::Integer(f) => (&f.title, &f.description),
        P::Boolean(f) => (&f.title, &f.description),
        P::Array(f) => (&f.title, &f.description),
        _ => return (None, None),
    };
    (title.as_deref(), description.as_deref())
}

/// What a field takes, in words: its type and constraints.
fn kind(property: &ElicitationPropertySchema) -> String {
    use ElicitationPropertySchema as P;
    let bounds = |min: Option<String>, max: Option<String>| match (min, max) {
        (Some(min), Some(max)) => format!(" {min} to {max}"),
        (Some(min), None) => format!(" ≥ {min}"),
        (None, Some(max)) => format!(" ≤ {max}"),
        (None, None) => String::new(),
    };
    match property {
        P::String(f) if choices(f).is_some() => "one choice, by number or value".to_owned(),
        P::String(f) => {
            let length = bounds(f.min_length.map(|n| n.to_string()), f.max_length.map(|n| n.to_string()));
            let length = if length.is_empty() { length } else { format!(",{length} characters") };
            let format = f.format.as_ref().map(|f| format!(", {}", f.as_str())).unwrap_or_default();
            format!("text{length}{format}")
        }
        P::Integer(f) => {
            format!("whole number{}", bounds(f.minimum.map(|n| n.to_string()), f.maximum.map(|n| n.to_string())))
        }
        P::Number(f) => format!("number{}", bounds(f.minimum.map(|n| n.to_string()), f.maximum.map(|n| n.to_string()))),
        P::Boolean(_) => "y/n".to_owned(),
        P::Array(f) => {
            let count = bounds(f.min_items.map(|n| n.to_string()), f.max_items.map(|n| n.to_string()));
            format!("choices separated by commas{}", if count.is_empty() { count } else { format!(",{count} of them") })
        }
        _ => "unknown".to_owned(),
    }
}
