//! How a one-prompt run reports on stdout: drawn for a person ([`Output::Text`]), every frame
//! and a summary as NDJSON ([`Output::Json`]), or the assistant's final text alone
//! ([`Output::Quiet`]). In the last two, stdout carries nothing else: the renderer draws only
//! errors, warnings and permission questions, on stderr.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};

use super::tap::Tap;

/// What `acp client` writes on stdout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Output {
    /// The session drawn for a person (the default).
    #[default]
    Text,
    /// `--format json`: one NDJSON record per frame,
    /// `{"type":"frame","dir":"c2a"|"a2c","t_ms":…,"msg":…}` (`"raw"` instead of `"msg"` for
    /// a line that is not JSON, `"truncated":true` for one longer than the frame limit), then
    /// one `{"type":"summary",…}` record.
    Json,
    /// `--quiet`: the assistant's final message only (the text after its last tool call, with
    /// a newline added if it has none; made inert when stdout is a terminal).
    Quiet,
}

impl Output {
    /// The tap this output needs (none for text).
    pub(crate) fn tap(self) -> Option<Tap> {
        match self {
            Output::Text => None,
            Output::Json => Some(Tap::new(Some(Box::new(crate::outlet::stdout())))),
            Output::Quiet => Some(Tap::new(None)),
        }
    }

    /// Ends the run's output: the summary record (json), or the final text (quiet).
    pub(crate) fn finish(self, tap: Option<&Tap>, exit: u8) {
        let Some(tap) = tap else { return };
        let text = tap.finish(exit);
        if self == Output::Quiet && !text.is_empty() {
            let mut out = crate::outlet::stdout();
            let text = shown(&text, std::io::stdout().is_terminal());
            let newline = if text.ends_with('\n') { "" } else { "\n" };
            let _ = write!(out, "{text}{newline}");
            let _ = out.flush();
        }
    }
}

/// The final text as `--quiet` prints it: the agent's text unchanged for a pipe or a file,
/// made inert ([`crate::sanitize::clean`]) for a terminal.
fn shown(text: &str, terminal: bool) -> Cow<'_, str> {
    if terminal { crate::sanitize::clean(text) } else { Cow::Borrowed(text) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_quiet_text_is_inert_on_a_terminal_and_exact_elsewhere() {
        let text = "done\x1b]0;owned\x07\r\x1b[2Jok\n";
        assert_eq!(super::shown(text, false), text);
        assert_eq!(super::shown(text, true), "done\\x1b]0;owned\\x07\\x0d\\x1b[2Jok\n");
    }
}
