//! How a one-prompt run reports on stdout: drawn for a person ([`Output::Text`]), every frame
//! and a summary as NDJSON ([`Output::Json`]), or the assistant's final text alone
//! ([`Output::Quiet`]). In the last two, stdout carries nothing else: the renderer draws only
//! errors, warnings and permission questions, on stderr.

use std::io::Write;

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
    /// a newline added if it has none).
    Quiet,
}

impl Output {
    /// The tap this output needs (none for text).
    pub(crate) fn tap(self) -> Option<Tap> {
        match self {
            Output::Text => None,
            Output::Json => Some(Tap::new(Some(Box::new(std::io::stdout())))),
            Output::Quiet => Some(Tap::new(None)),
        }
    }

    /// Ends the run's output: the summary record (json), or the final text (quiet).
    pub(crate) fn finish(self, tap: Option<&Tap>, exit: u8) {
        let Some(tap) = tap else { return };
        let text = tap.finish(exit);
        if self == Output::Quiet && !text.is_empty() {
            let mut out = std::io::stdout().lock();
            let newline = if text.ends_with('\n') { "" } else { "\n" };
            let _ = write!(out, "{text}{newline}");
            let _ = out.flush();
        }
    }
}
