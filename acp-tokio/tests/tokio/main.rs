//! acp-tokio's integration tests, one binary: each module is a former `tests/<name>.rs` (its
//! docs at its top), so `cargo test -p acp-tokio --test tokio <name>::` runs what
//! `--test <name>` ran; a module the features of the build lack is left out (what the
//! `required-features` of its former `[[test]]` said; the server's Streamable HTTP tests need
//! only the internal feature `__remote` that `ws`, `http` and `tls` turn on). Two stay binaries of their own:
//! `storm.rs` (this process's peak memory is the storm's alone) and `tracing.rs` (sets the
//! global subscriber). The scenario suite and the cross-adapter tests (formerly `suite/`, `cross.rs`
//! and `cross_v2.rs` here) drive both adapters: they are acp-scenarios's tests; the suite runs
//! every scenario on v1 and v2, on tokio, a `LocalSet`, async-std and across the adapters (so
//! the former `async_std_v2.rs` and `cross_v2.rs` are its `v2::async_std` and
//! `v2::{blocking_client_tokio_agent, tokio_client_blocking_agent}` modules). What stays here
//! for v2 is what only v2 has (`v2.rs`: its turn's state updates and tool calls, `tool_call/cancel`,
//! version refusal and the `Acceptor`; `remote_v2.rs`: v2 over the remote transports).

#[path = "../common/mod.rs"]
mod common;
// The scripted v2 agent, loaded once for the modules v2 and remote_v2.
#[cfg(feature = "unstable_protocol_v2")]
#[path = "../support/v2_agent.rs"]
#[allow(dead_code, unreachable_pub)]
mod v2_agent;

mod async_std;
mod elicitation;
mod flood;
mod half_close;
mod process;
#[cfg(all(feature = "ws", feature = "unstable_session_attach"))]
mod remote_attach;
#[cfg(feature = "__remote")]
mod remote_http;
#[cfg(feature = "__remote")]
mod remote_http_binding;
#[cfg(feature = "__remote")]
mod remote_http_bounds;
#[cfg(feature = "http")]
mod remote_http_client;
#[cfg(feature = "__remote")]
mod remote_http_deadlines;
#[cfg(feature = "unstable_resumable_transport")]
mod remote_http_resume;
#[cfg(all(feature = "http", feature = "tls"))]
mod remote_https;
#[cfg(all(feature = "ws", feature = "http", feature = "unstable_resumable_transport"))]
mod remote_reconnect;
#[cfg(all(feature = "tls", feature = "ws"))]
mod remote_tls;
mod remote_v2;
#[cfg(feature = "ws")]
mod remote_ws;
#[cfg(all(feature = "ws", feature = "unstable_resumable_transport"))]
mod remote_ws_resume;
mod tokio_duplex;
mod tokio_flow;
#[cfg(all(
    feature = "unstable_session_set_title",
    feature = "unstable_session_status",
    feature = "unstable_session_archive",
    feature = "unstable_session_fork",
    feature = "unstable_prompt_suggestions",
    feature = "unstable_session_cursors",
    feature = "unstable_mcp_over_acp",
    feature = "unstable_auth_status",
    feature = "unstable_llm_providers",
    feature = "unstable_end_turn_token_usage",
    feature = "unstable_session_options",
    feature = "unstable_proxy_chains"
))]
mod unstable_session;
#[cfg(feature = "unstable_protocol_v2")]
mod v2;
