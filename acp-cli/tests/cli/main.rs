//! acp-cli's integration tests, one binary: each module is a former `tests/<name>.rs` (its
//! docs at its top), so `cargo test -p acp-cli --test cli <name>::` runs what `--test <name>`
//! ran. They share `common` (the `acp` binary, temporary directories, a recording client).

mod common;

mod agent;
mod agent_output_bound;
mod blocked_output;
mod check_agent;
mod check_bugs;
mod check_client;
mod check_processes;
#[cfg(feature = "unstable_protocol_v2")]
mod check_v2;
mod client;
mod client_limits;
mod client_output_bound;
mod client_policy;
mod client_processes;
mod config_sessions;
mod elicit_terminal;
mod interop;
mod interop_python;
mod load_balancer;
mod named_files;
mod newest_v1;
mod output_formats;
mod peer_text;
mod record_replay;
mod remote;
mod remote_faults;
mod remote_http;
mod remote_load;
#[cfg(feature = "unstable_resumable_transport")]
mod remote_resume;
mod remote_shared;
mod remote_tls;
mod render_escapes;
mod repl;
mod replay_bounds;
mod roster;
mod scorecard;
mod serve_bounds;
mod termination;
#[cfg(feature = "unstable_protocol_v2")]
mod v2;
