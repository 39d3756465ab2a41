//! The adapter's error type.

use std::fmt;
use std::io;

use acp_proto::methods::DecodeError;
use acp_proto::types::ProtocolVersion;
use acp_proto::{Outcome, Response, RpcError, SendError};

/// Why a request, a notification or the connection failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The peer answered with a JSON-RPC error.
    Rpc(RpcError),
    /// The request's deadline passed before the answer came; a `$/cancel_request` was sent.
    TimedOut,
    /// The request was cancelled locally (or, agent side, by the client's `session/cancel`).
    Cancelled,
    /// The connection is closed, or closed before the answer came.
    ConnectionClosed,
    /// The core refused to send: nothing went out (e.g. the peer did not advertise the
    /// capability the method needs: [`SendError::NotSupportedByPeer`]).
    Send(SendError),
    /// The peer answered with a result that does not decode as the method's result type.
    InvalidResult(DecodeError),
    /// The transport failed.
    Io(io::Error),
    /// The answer had another type than the request's method returns.
    UnexpectedResponse,
    /// The agent answered `initialize` with a protocol version this client does not speak
    /// ([`Config::supported_versions`](acp_proto::Config::supported_versions)); the connection
    /// is closed.
    UnsupportedProtocolVersion(ProtocolVersion),
}

impl Error {
    /// The peer's JSON-RPC error, if that is what this is.
    pub fn rpc(&self) -> Option<&RpcError> {
        match self {
            Error::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// Maps the core's outcome of an outbound request onto a result.
    pub(crate) fn from_outcome(outcome: Outcome) -> Result<Response, Error> {
        match outcome {
            Outcome::Result(response) => Ok(response),
            Outcome::Error(e) => Err(Error::Rpc(e)),
            Outcome::InvalidResult(e) => Err(Error::InvalidResult(e)),
            Outcome::TimedOut => Err(Error::TimedOut),
            Outcome::Cancelled => Err(Error::Cancelled),
            Outcome::ConnectionClosed => Err(Error::ConnectionClosed),
            _ => Err(Error::UnexpectedResponse),
        }
    }
}

impl From<SendError> for Error {
    fn from(e: SendError) -> Error {
        match e {
            SendError::Closed => Error::ConnectionClosed,
            e => Error::Send(e),
        }
    }
}

impl From<RpcError> for Error {
    fn from(e: RpcError) -> Error {
        Error::Rpc(e)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rpc(e) => write!(f, "the peer answered an error: {e}"),
            Error::TimedOut => f.write_str("the request timed out"),
            Error::Cancelled => f.write_str("the request was cancelled"),
            Error::ConnectionClosed => f.write_str("the connection is closed"),
            Error::Send(e) => write!(f, "not sent: {e}"),
            Error::InvalidResult(e) => write!(f, "the peer's result is invalid: {e}"),
            Error::Io(e) => write!(f, "transport error: {e}"),
            Error::UnexpectedResponse => f.write_str("the answer has an unexpected type"),
            Error::UnsupportedProtocolVersion(v) => {
                write!(f, "the agent chose protocol version {}, which this client does not support", v.0)
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Rpc(e) => Some(e),
            Error::Send(e) => Some(e),
            Error::InvalidResult(e) => Some(e),
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}
