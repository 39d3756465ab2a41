//! `acp record`: a stdio proxy that writes a transcript.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use acp_cli::record::{self, RecordConfig};
use clap::Args;

#[derive(Debug, Args)]
#[command(after_help = "Example (an editor's agent command, or any client's):\n  \
acp client -p 'hello' -- acp record --out session.ndjson -- acp agent\n\n\
Bytes pass unchanged both ways; the transcript holds one JSON object per line: a header, \
{\"t_ms\",\"dir\":\"c2a\"|\"a2c\",\"line\"} per line that crossed, and the agent's exit. \
Exit code: the agent's (128 + N if signal N ended it). SIGTERM, SIGINT and SIGHUP are passed to the agent.")]
pub(crate) struct RecordArgs {
    /// Where to write the transcript (NDJSON; created or truncated).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// The agent's command line, after `--`.
    #[arg(last = true, required = true, value_name = "AGENT_CMD")]
    agent: Vec<OsString>,
}

/// Runs the proxy until the agent exits; its exit code is the agent's.
pub(crate) fn run(args: RecordArgs) -> ExitCode {
    ExitCode::from(record::run(&RecordConfig::new(args.out, args.agent)))
}
