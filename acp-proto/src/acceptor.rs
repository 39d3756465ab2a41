//! The agent's branch point between protocol versions: [`Acceptor`].

use crate::Side;
use crate::connection::{AnyConnection, Config, Connection};
use crate::protocol::V1;
#[cfg(feature = "unstable_protocol_v2")]
use crate::protocol::V2;
use crate::role::Agent;
use crate::time::Instant;
use crate::types::ProtocolVersion;
#[cfg(feature = "unstable_protocol_v2")]
use crate::{ClientRequest, Request, RpcError};

/// An agent-side connection that has not yet read the client's `initialize`: it speaks every
/// version this build knows until then.
///
/// It reads the client's first
/// frame (`initialize`), picks the version it offers, and hands on a [`Connection<Agent, V1>`] or a
/// `Connection<Agent, V2>` that has already been fed every byte the acceptor consumed, so nothing is
/// lost (hyper-util's `server::conn::auto` peeks an HTTP/2 preface the same way and hands the
/// bytes on; tungstenite's `from_partially_read` takes the bytes already read).
///
/// The choice is the negotiation table's (module `connection::turns_v2`): an `initialize`
/// offering 2 or later gets v2, one offering 1 gets v1. Anything before it is answered as a
/// v1 machine answers it (`-32600` before the handshake, `-32700` for bad JSON, the
/// oversized-frame error for a line over the limit), and the acceptor reads on; an input that
/// ends first gives a (closed) [`Connection<Agent, V1>`], as without the acceptor.
///
/// ```
/// use acp_proto::{Acceptor, Accepted, Config, Event, Instant};
///
/// let mut acceptor = Acceptor::new(Config::default(), Instant::ZERO);
/// let init = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n";
/// assert_eq!(acceptor.handle_input(Instant::ZERO, init), init.len());
/// let Ok(Accepted::V1(mut agent)) = acceptor.accept() else { panic!("a v1 client") };
/// assert!(matches!(agent.poll_event(), Some(Event::Request(_))), "the initialize is there");
/// ```
#[derive(Debug)]
pub struct Acceptor {
    engine: AnyConnection,
}

/// The connection an [`Acceptor`] settled on.
#[derive(Debug)]
#[non_exhaustive]
pub enum Accepted {
    /// The client offered version 1 (or the input ended first).
    V1(Connection<Agent, V1>),
    /// The client offered version 2 or later (feature `unstable_protocol_v2`).
    #[cfg(feature = "unstable_protocol_v2")]
    V2(Connection<Agent, V2>),
}

impl Acceptor {
    /// An agent-side acceptor with `config` (its `supported_versions` become every version this
    /// build speaks), created at `now`.
    pub fn new(mut config: Config, now: Instant) -> Acceptor {
        config.supported_versions = vec![ProtocolVersion::V1];
        #[cfg(feature = "unstable_protocol_v2")]
        config.supported_versions.push(ProtocolVersion::V2);
        Acceptor { engine: AnyConnection::new(Side::Agent, config, now) }
    }

    /// Feeds bytes read from the client; returns how many were consumed. It stops consuming
    /// once the version is chosen ([`accept`](Self::accept) then succeeds): the rest goes to
    /// the connection.
    #[must_use = "bytes that were not consumed must be fed again"]
    pub fn handle_input(&mut self, now: Instant, data: &[u8]) -> usize {
        let mut consumed = 0;
        // Line by line, so that nothing after the `initialize` is read by the acceptor.
        while consumed < data.len() && self.engine.chosen_version().is_none() {
            let rest = &data[consumed..];
            let line = rest.iter().position(|&b| b == b'\n').map_or(rest.len(), |at| at + 1);
            let n = self.engine.handle_input(now, &rest[..line]);
            consumed += n;
            if n < line {
                break;
            }
        }
        consumed
    }

    /// The client's output ended before it chose a version: the connection is a v1 one (as
    /// without the acceptor), half-closed.
    pub fn handle_eof(&mut self, now: Instant) {
        self.engine.handle_eof(now);
    }

    /// Appends the frames queued so far (answers to what came before `initialize`) to `buf`.
    #[must_use]
    pub fn poll_transmit(&mut self, buf: &mut Vec<u8>) -> usize {
        self.engine.poll_transmit(buf)
    }

    /// Bytes queued for the client (answers to what came before `initialize`), not yet taken
    /// by [`poll_transmit`](Self::poll_transmit).
    pub fn bytes_queued(&self) -> usize {
        self.engine.bytes_queued()
    }

    /// Whether the outbound byte budget has room: a writer that waits on
    /// [`Connection::can_send`] waits on this the same way before the version is chosen.
    pub fn can_send(&self) -> bool {
        self.engine.can_send()
    }

    /// The configuration (its `supported_versions`: every version this build speaks).
    pub fn config(&self) -> &Config {
        self.engine.config()
    }

    /// Counters, as [`Connection::stats`] gives them (they carry over to the connection).
    pub fn stats(&self) -> crate::connection::Stats {
        self.engine.stats()
    }

    /// A rough upper bound of the memory held, in bytes (as [`Connection::memory_estimate`]).
    pub fn memory_estimate(&self) -> usize {
        self.engine.memory_estimate()
    }

    /// Whether the version is chosen: [`accept`](Self::accept) would succeed.
    pub fn is_decided(&self) -> bool {
        self.engine.chosen_version().is_some()
    }

    /// What an agent that serves only the versions `served` answers `request` on a connection of
    /// a version it does not serve: the [`Connection<Agent, V1>`] an acceptor hands on for a client
    /// offering 1, when the agent speaks v2 only. An `initialize` asking for a version below
    /// every served one is `-32022` with `{requested, supported}`
    /// ([`RpcError::unsupported_protocol_version`]): v2's version negotiation
    /// (`spec/crate-1.20.0/v2/schema.json`, `InitializeResponse.protocolVersion`: "the highest
    /// protocol version supported by the Agent that is at or below the version requested by
    /// the Client. If no such version exists, initialization fails with error code -32022").
    /// Any other request is `-32601`.
    ///
    /// ```
    /// use acp_proto::{Acceptor, ErrorCode, Request};
    /// use acp_proto::types::{InitializeRequest, ProtocolVersion};
    /// let init = Request::from(InitializeRequest::new(ProtocolVersion::V1));
    /// let answer = Acceptor::refusal(&init, &[ProtocolVersion::V2]);
    /// assert_eq!(answer.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    /// assert_eq!(answer.data.unwrap()["supported"], serde_json::json!([2]));
    /// ```
    #[cfg(feature = "unstable_protocol_v2")]
    pub fn refusal(request: &Request, served: &[ProtocolVersion]) -> RpcError {
        let refused = match request {
            Request::Client(ClientRequest::Initialize(init)) => {
                RpcError::refusing_version(init.protocol_version, served)
            }
            _ => None,
        };
        refused.unwrap_or_else(|| RpcError::method_not_found(request.wire()))
    }

    /// The connection, once the client's `initialize` chose its version (or the input ended);
    /// the acceptor back while it has not.
    // The acceptor comes back by value, as a refused message does: once per connection.
    #[allow(clippy::result_large_err)]
    pub fn accept(mut self) -> Result<Accepted, Acceptor> {
        match self.engine.chosen_version() {
            None => Err(self),
            #[cfg(feature = "unstable_protocol_v2")]
            Some(v) if v == ProtocolVersion::V2 => {
                self.engine.speak_only(v);
                Ok(Accepted::V2(Connection::from_engine(self.engine)))
            }
            Some(_) => {
                self.engine.speak_only(ProtocolVersion::V1);
                Ok(Accepted::V1(Connection::from_engine(self.engine)))
            }
        }
    }
}
