//! `acp check agent -- AGENT_CMD...` and `acp check client -- CLIENT_CMD...`: conformance
//! checks of an ACP agent or client, each requirement with an id, a level and a spec citation
//! (see [`report`]).

pub mod agent;
mod children;
pub mod client;
pub mod report;
