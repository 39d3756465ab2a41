//! ACP v1 ([`V1`](crate::V1)): the message set of the stable protocol, under the same names as
//! `v2`'s where both have the thing (`v1::Request`, `v1::Method`,
//! `v1::Notification`, `v1::Response`, `v1::MethodRow`), so that code generic over
//! [`Protocol`](crate::Protocol) reads the same for either version. The schema's types are here
//! too (the same as [`types`](crate::types)); the crate root keeps its re-exports of these
//! names.
//!
//! ```
//! use acp_proto::{Protocol, V1, v1};
//!
//! let request: v1::Request = v1::InitializeRequest::new(v1::ProtocolVersion::V1).into();
//! assert_eq!(request.method(), Some(v1::Method::Initialize));
//! assert_eq!(V1::wire(v1::Method::Initialize), "initialize");
//! ```

pub use crate::methods::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest, ClientResponse, DecodeError,
    Method, MethodRow, Notification, Request, Response, TypedRequest,
};
pub use crate::types::*;
