//! How `acp client` and `acp demo` answer permission requests: `--allow`, `--deny`, `--ask`.

use acp_cli::client::Policy;
use clap::Args;

/// How permission requests are answered.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub(crate) struct PolicyArgs {
    /// Allow every permission request (picks an allow option).
    #[arg(long)]
    allow: bool,
    /// Reject every permission request (picks a reject option).
    #[arg(long)]
    deny: bool,
    /// Ask for each one (reads the answers from stdin when it is not a terminal). The default
    /// on a terminal; otherwise the default is --deny.
    #[arg(long)]
    pub(crate) ask: bool,
}

impl PolicyArgs {
    pub(crate) fn policy(&self) -> Option<Policy> {
        match (self.allow, self.deny, self.ask) {
            (true, _, _) => Some(Policy::Allow),
            (_, true, _) => Some(Policy::Deny),
            (_, _, true) => Some(Policy::Ask),
            _ => None,
        }
    }
}
