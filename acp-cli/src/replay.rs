//! `acp replay FILE`: a transcript written by `acp record`, shown again.
//!
//! * `acp replay FILE` draws it with `acp client`'s renderer (module `render`);
//! * `--summary`: sessions, turns with their stop reasons, request counts and latencies per
//!   method (module `summary`);
//! * `--check`: every protocol violation, with its line number (module `check`); exit 0 iff none.
//!
//! The transcript is read one record at a time, and what each mode remembers between records
//! is bounded (module `open`, and the modules of each mode): memory stays bounded whatever the
//! file. What a transcript holds is the peers' text: it is printed inert (module `sanitize`).

mod check;
mod open;
mod read;
mod render;
mod summary;

use std::io::Write as _;
use std::path::PathBuf;

use crate::client::Style;

/// What `acp replay` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayMode {
    /// The session as the client showed it.
    Render,
    /// Sessions, turns, requests and latencies.
    Summary,
    /// Protocol violations.
    Check,
}

/// What `acp replay` runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ReplayConfig {
    /// The transcript.
    pub file: PathBuf,
    /// What to show.
    pub mode: ReplayMode,
}

impl ReplayConfig {
    /// Shows `file` as `mode` says.
    pub fn new(file: PathBuf, mode: ReplayMode) -> ReplayConfig {
        ReplayConfig { file, mode }
    }
}

/// Runs `acp replay`; the exit code: 0, or 1 when the file cannot be read or (`--check`)
/// holds a violation.
pub fn run(config: &ReplayConfig) -> u8 {
    let records = match read::open(&config.file) {
        Ok(records) => records,
        Err(e) => {
            eprintln!("acp replay: {e}");
            return 1;
        }
    };
    // Records until the first read error, which is reported once the mode is done.
    let mut error = None;
    let records = records.map_while(|r| r.map_err(|e| error = Some(e)).ok());
    let code = match config.mode {
        ReplayMode::Render => {
            render::render(records, Box::new(std::io::stdout()), Style::detect());
            0
        }
        ReplayMode::Summary => {
            print!("{}", summary::summarize(records));
            0
        }
        ReplayMode::Check => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let verdict = check::check(records, &mut out).and_then(|verdict| out.flush().map(|()| verdict));
            match verdict {
                Ok(verdict) => u8::from(verdict.violations > 0),
                // stdout is gone (a closed pipe): nobody reads the verdict.
                Err(_) => 1,
            }
        }
    };
    match error {
        Some(e) => {
            eprintln!("acp replay: cannot read {}: {e}", config.file.display());
            1
        }
        None => code,
    }
}
