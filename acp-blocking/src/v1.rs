//! ACP v1, the stable protocol: the crate root's API under the names module `v2` uses for v2
//! (feature `unstable_protocol_v2`): `v1::Agent`, `v1::Client`, `v1::ClientConnection`,
//! `v1::ClientContext`, `v1::PromptTurn`, `v1::serve`, `v1::serve_stdio`, `v1::serve_with`, so
//! code can name either version's module, as `acp_tokio::v1` and `acp_tokio::v2` do. The
//! handler contexts keep v1's own names (`RequestContext`, `PromptContext`): v1's prompt
//! handler streams its turn, v2's only acknowledges it.
//!
//! ```
//! use acp_blocking::acp_proto::{RpcError, types::*};
//! use acp_blocking::v1;
//!
//! struct Echo;
//!
//! impl v1::Agent for Echo {
//!     fn initialize(&self, _: InitializeRequest, _: &v1::RequestContext) -> Result<InitializeResponse, RpcError> {
//!         Ok(InitializeResponse::new(ProtocolVersion::V1))
//!     }
//!     fn new_session(&self, _: NewSessionRequest, _: &v1::RequestContext) -> Result<NewSessionResponse, RpcError> {
//!         Ok(NewSessionResponse::new("s"))
//!     }
//!     fn prompt(&self, request: PromptRequest, cx: &v1::PromptContext) -> Result<PromptResponse, RpcError> {
//!         for block in request.prompt {
//!             if let ContentBlock::Text(text) = block {
//!                 cx.send_text(text.text)?;
//!             }
//!         }
//!         Ok(PromptResponse::new(StopReason::EndTurn))
//!     }
//! }
//!
//! fn main() -> Result<(), acp_blocking::Error> {
//!     let (agent_in, client_out) = std::io::pipe()?;
//!     let (client_in, agent_out) = std::io::pipe()?;
//!     let agent = std::thread::spawn(move || v1::serve(Echo, agent_in, agent_out));
//!     let conn = v1::ClientConnection::connect((), client_in, client_out, v1::ClientOptions::default())?;
//!     conn.initialize(InitializeRequest::new(ProtocolVersion::V1))?;
//!     let session = conn.new_session(NewSessionRequest::new("/tmp", vec![]))?.session_id;
//!     let mut echoed = Vec::new();
//!     let stop = conn.prompt_with(PromptRequest::new(session, vec!["hi".into()]), |u| echoed.push(u))?;
//!     assert_eq!((stop, echoed.len()), (StopReason::EndTurn, 1));
//!     conn.close()?;
//!     agent.join().expect("the agent thread")
//! }
//! ```

#[cfg(unix)]
pub use crate::serve_fds;
pub use crate::{
    Agent, AgentOptions, Client, ClientConnection, ClientContext, ClientOptions, PromptContext, PromptTurn,
    RequestContext, Requester, serve, serve_stdio, serve_with,
};
