//! `acp replay FILE`: a transcript written by `acp record`, shown again.
//!
//! * `acp replay FILE` draws it with `acp client`'s renderer (module `render`);
//! * `--summary`: sessions, turns with their stop reasons, request counts and latencies per
//!   method (module `summary`);
//! * `--check`: every protocol violation, with its line number (module `check`); exit 0 iff none.

mod check;
mod read;
mod render;
mod summary;

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
    let records = match read::read_file(&config.file) {
        Ok(records) => records,
        Err(e) => {
            eprintln!("acp replay: {e}");
            return 1;
        }
    };
    match config.mode {
        ReplayMode::Render => {
            render::render(&records, Box::new(std::io::stdout()), Style::detect());
            0
        }
        ReplayMode::Summary => {
            print!("{}", summary::summarize(&records));
            0
        }
        ReplayMode::Check => {
            let (findings, lines) = check::check(&records);
            print!("{}", check::report(&findings, lines));
            u8::from(findings.iter().any(|f| f.violation))
        }
    }
}
