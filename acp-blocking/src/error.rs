//! The adapter's error type.

use std::fmt;
use std::io;

use acp_proto::methods::DecodeError;
use acp_proto::types::ProtocolVersion;
use acp_proto::{Method, Outcome, Response, RpcError, SendError};

/// Why a call through the adapter failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The peer answered the request with a JSON-RPC error.
    Rpc(RpcError),
    /// The request's deadline passed before the peer answered (a `$/cancel_request` was sent).
    TimedOut,
    /// The request was cancelled locally, or by the core's `session/cancel` cascade.
    Cancelled,
    /// The connection closed (or was closed) before the request got an answer.
    ConnectionClosed,
    /// The core refused to send the request and nothing was sent, e.g.
    /// [`SendError::NotSupportedByPeer`] for a method the peer did not advertise.
    Send(SendError),
    /// The peer's result did not decode as the method's result type.
    InvalidResult(DecodeError),
    /// The result decoded as a different method's result (an internal inconsistency).
    UnexpectedResponse,
    /// The agent chose a protocol version this client does not speak; the core closed the
    /// connection.
    UnsupportedProtocolVersion(ProtocolVersion),
    /// Reading from or writing to the transport failed, or a thread or process could not start.
    Io(io::Error),
}

impl Error {
    /// The JSON-RPC error code, when the peer answered with an error.
    pub fn rpc_code(&self) -> Option<i32> {
        match self {
            Error::Rpc(e) => Some(e.code.0),
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

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

impl From<RpcError> for Error {
    fn from(e: RpcError) -> Error {
        Error::Rpc(e)
    }
}

/// Lets a handler answer with `?` when one of its own calls fails: a cancelled call answers
/// `-32800`, anything else `-32603` with the error as the reason.
impl From<Error> for RpcError {
    fn from(e: Error) -> RpcError {
        match e {
            Error::Cancelled => RpcError::request_cancelled(),
            e => RpcError::internal_error(e.to_string()),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Rpc(e) => write!(f, "the peer answered with an error: {e}"),
            Error::TimedOut => f.write_str("the request timed out"),
            Error::Cancelled => f.write_str("the request was cancelled"),
            Error::ConnectionClosed => f.write_str("connection closed"),
            Error::Send(e) => write!(f, "refused locally: {e}"),
            Error::InvalidResult(e) => write!(f, "the peer's result is invalid: {e}"),
            Error::UnexpectedResponse => f.write_str("the result does not belong to the request"),
            Error::UnsupportedProtocolVersion(v) => {
                write!(f, "the agent chose protocol version {}, which this client does not support", v.0)
            }
            Error::Io(e) => write!(f, "I/O error: {e}"),
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

/// The `-32601` answer of a method a handler trait does not implement (their default).
pub(crate) fn unhandled<T>(method: Method) -> Result<T, RpcError> {
    Err(RpcError::method_not_found(method.wire()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_and_refusals_map_onto_errors() {
        assert!(matches!(Error::from_outcome(Outcome::TimedOut), Err(Error::TimedOut)));
        assert!(matches!(Error::from_outcome(Outcome::ConnectionClosed), Err(Error::ConnectionClosed)));
        let e = Error::from_outcome(Outcome::Error(RpcError::internal_error("x"))).unwrap_err();
        assert_eq!(e.rpc_code(), Some(-32603));
        assert!(matches!(Error::from(SendError::Closed), Error::ConnectionClosed));
        assert!(matches!(Error::from(SendError::NotInitialized), Error::Send(SendError::NotInitialized)));
        assert_eq!(Error::ConnectionClosed.to_string(), "connection closed");
    }
}
