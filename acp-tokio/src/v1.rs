//! ACP v1, the stable protocol: the crate root's API under the names `acp_tokio::v2` uses for
//! v2 (`v1::Agent`, `v1::Client`, `v1::ClientConnection`, `v1::PromptTurn`, `v1::serve`, …), so
//! code can name either version's module.

pub use crate::{
    Agent, Client, ClientConnection, ClientContext, LocalAgent, LocalClient, PromptContext, PromptTurn, RequestContext,
    serve, serve_local, serve_stdio, serve_stdio_local,
};
