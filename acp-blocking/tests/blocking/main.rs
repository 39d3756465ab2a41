//! acp-blocking's integration tests, one binary: each module is a former `tests/<name>.rs` (its
//! docs at its top), so `cargo test -p acp-blocking --test blocking <name>::` runs what
//! `--test <name>` ran. Three stay binaries of their own, as each watches this whole process:
//! `lead.rs` (finds its connection's driver thread among the process's threads), `storm.rs`
//! (the process's peak memory) and `tracing.rs` (sets the global subscriber).

#[path = "../common/mod.rs"]
mod common;

mod child_process;
mod elicitation;
mod flood;
mod half_close;
mod pipes;
mod poll_fds;
mod proxy_chains;
mod unstable;
#[cfg(feature = "unstable_protocol_v2")]
mod v2;
mod write_through;
