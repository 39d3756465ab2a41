//! Drawing elicitations (see [`crate::client::elicit`]): the form's message and what was
//! answered, a URL to open, a URL elicitation's completion. Peer text goes through the
//! sanitizing writers of the parent module.

use super::Renderer;
use crate::client::elicit::ElicitNote;

impl Renderer {
    /// An elicitation and its outcome.
    pub(crate) fn elicitation(&mut self, note: &ElicitNote) {
        match note {
            ElicitNote::Form { message, outcome } => {
                self.line(&[("1;33", "? form:"), ("", " "), ("1", message)]);
                match outcome {
                    Ok(fields) => {
                        let sent = format!("({})", fields.join(", "));
                        self.line(&[("", "  → "), ("1", "accepted"), ("", " "), ("2", "--elicit "), ("2", &sent)]);
                    }
                    Err(why) => {
                        self.line(&[("", "  → "), ("1", "declined"), ("", " "), ("2", "("), ("2", why), ("2", ")")])
                    }
                }
            }
            ElicitNote::Url { message, url, id } => {
                self.line(&[("1;33", "? open:"), ("", " "), ("1", url)]);
                self.line(&[("", "  "), ("", message), ("2", " (elicitation "), ("2", id), ("2", ")")]);
            }
            ElicitNote::Completed { id } => self.info(&format!("elicitation {id} completed")),
        }
    }
}
