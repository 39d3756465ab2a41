//! `acp replay`: a recorded transcript drawn again, summarized or checked.

use std::path::PathBuf;
use std::process::ExitCode;

use acp_cli::replay::{self, ReplayConfig, ReplayMode};
use clap::Args;

#[derive(Debug, Args)]
#[command(after_help = "Exit code: 0; with --check, 1 when a violation was found (or the file cannot be read).")]
pub(crate) struct ReplayArgs {
    /// Sessions, turns with their stop reasons, request counts and latencies per method.
    #[arg(long, conflicts_with = "check")]
    summary: bool,
    /// Report every protocol violation with its transcript line number.
    #[arg(long)]
    check: bool,
    /// The transcript written by `acp record`.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

impl ReplayArgs {
    /// What to do with the transcript.
    fn config(self) -> ReplayConfig {
        let mode = match (self.summary, self.check) {
            (true, _) => ReplayMode::Summary,
            (_, true) => ReplayMode::Check,
            _ => ReplayMode::Render,
        };
        ReplayConfig::new(self.file, mode)
    }
}

/// Replays the transcript.
pub(crate) fn run(args: ReplayArgs) -> ExitCode {
    ExitCode::from(replay::run(&args.config()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Command, parse};

    fn mode(args: &[&str]) -> ReplayMode {
        match parse(&[&["replay"], args, &["t.ndjson"]].concat()) {
            Command::Replay(args) => args.config().mode,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_flags_choose_what_is_shown() {
        assert_eq!(mode(&[]), ReplayMode::Render);
        assert_eq!(mode(&["--summary"]), ReplayMode::Summary);
        assert_eq!(mode(&["--check"]), ReplayMode::Check);
    }
}
