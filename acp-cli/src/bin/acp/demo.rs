//! `acp demo`: the client against the built-in agent.

use std::process::ExitCode;

use acp_cli::Protocol;
use acp_cli::demo::{self, DemoConfig};
use clap::Args;

use crate::policy::PolicyArgs;

#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    #[command(flatten)]
    policy: PolicyArgs,
    /// Show the agent's stderr.
    #[arg(long)]
    show_stderr: bool,
    /// The ACP version the demo's client and agent speak: 1, or 2 (the v2 Preview; needs a
    /// build with the feature unstable_protocol_v2).
    #[arg(long, value_enum, value_name = "VERSION", default_value = "1")]
    protocol: Protocol,
}

impl DemoArgs {
    /// The demo's settings these arguments ask for.
    fn config(&self) -> DemoConfig {
        let mut config = DemoConfig::default();
        config.policy = self.policy.policy();
        config.show_stderr = self.show_stderr;
        config.protocol = self.protocol;
        config
    }
}

/// Runs the demo.
pub(crate) fn run(args: DemoArgs) -> ExitCode {
    demo::run(args.config()).into()
}
