//! [`Error`]: why a call through an adapter failed, the same type on every runtime.

use std::fmt;
use std::io;

use acp_proto::methods::DecodeError;
use acp_proto::protocol::Protocol;
use acp_proto::types::ProtocolVersion;
use acp_proto::{Outcome, Refused, RpcError, SendError};

/// Why a request, a notification or the connection failed, on any adapter.
///
/// Inside a handler, `?` turns it into the handler's JSON-RPC answer (see the
/// [`From<Error> for RpcError`](#impl-From%3CError%3E-for-RpcError) impl): a call cancelled under
/// the handler answers `-32800`, any other failure `-32603` naming it.
///
/// ```
/// use acp_proto::{ErrorCode, RpcError};
/// use acp_runtime::Error;
///
/// fn handler(call: Result<u32, Error>) -> Result<u32, RpcError> {
///     Ok(call? + 1)
/// }
/// assert_eq!(handler(Ok(1)), Ok(2));
/// assert_eq!(handler(Err(Error::Cancelled)).unwrap_err().code, ErrorCode::REQUEST_CANCELLED);
/// assert_eq!(handler(Err(Error::TimedOut)).unwrap_err().code, ErrorCode::INTERNAL_ERROR);
/// ```
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
    /// The answer had another type than the request's method returns.
    UnexpectedResponse,
    /// The agent answered `initialize` with a protocol version this client does not speak
    /// ([`Config::supported_versions`](acp_proto::Config::supported_versions)); the connection
    /// is closed.
    UnsupportedProtocolVersion(ProtocolVersion),
    /// The transport failed, or a thread or process could not start.
    Io(io::Error),
}

impl Error {
    /// The peer's JSON-RPC error, if that is what this is.
    pub fn rpc(&self) -> Option<&RpcError> {
        match self {
            Error::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// The peer's JSON-RPC error code, if it answered with an error.
    pub fn rpc_code(&self) -> Option<i32> {
        self.rpc().map(|e| e.code.0)
    }

    /// Maps the core's [`Outcome`] of an outbound request onto a result (for adapters), for
    /// either protocol version: the result is the version's [`Protocol::Response`]. Every
    /// variant is matched (no catch-all), so a new one is a compile error here.
    ///
    /// ```
    /// use acp_proto::{Outcome, RpcError, V1};
    /// use acp_runtime::Error;
    ///
    /// let failed = Error::from_outcome(Outcome::<V1>::Error(RpcError::invalid_params("no")));
    /// assert_eq!(failed.unwrap_err().rpc_code(), Some(-32602));
    /// ```
    pub fn from_outcome<P: Protocol>(outcome: Outcome<P>) -> Result<P::Response, Error> {
        match outcome {
            Outcome::Result(response) => Ok(response),
            Outcome::Error(e) => Err(Error::Rpc(e)),
            Outcome::InvalidResult(e) => Err(Error::InvalidResult(e)),
            Outcome::TimedOut => Err(Error::TimedOut),
            Outcome::Cancelled => Err(Error::Cancelled),
            Outcome::ConnectionClosed => Err(Error::ConnectionClosed),
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

impl<T> From<Refused<T>> for Error {
    fn from(refused: Refused<T>) -> Error {
        Error::from(refused.error)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_and_refusals_map_onto_errors() {
        use acp_proto::V1;
        assert!(matches!(Error::from_outcome(Outcome::<V1>::TimedOut), Err(Error::TimedOut)));
        assert!(matches!(Error::from_outcome(Outcome::<V1>::ConnectionClosed), Err(Error::ConnectionClosed)));
        assert!(matches!(Error::from_outcome(Outcome::<V1>::Cancelled), Err(Error::Cancelled)));
        let e = Error::from_outcome(Outcome::<V1>::Error(RpcError::internal_error("x"))).unwrap_err();
        assert_eq!(e.rpc_code(), Some(-32603));
        let invalid = acp_proto::methods::DecodeError::Invalid("no".to_owned());
        assert!(matches!(Error::from_outcome(Outcome::<V1>::InvalidResult(invalid)), Err(Error::InvalidResult(_))));
        let v1: acp_proto::types::AuthenticateResponse = Default::default();
        let response = acp_proto::Response::Agent(v1.into());
        assert_eq!(Error::from_outcome(Outcome::<V1>::Result(response.clone())).unwrap(), response);
        assert!(matches!(Error::from(SendError::Closed), Error::ConnectionClosed));
        assert!(matches!(Error::from(SendError::NotInitialized), Error::Send(SendError::NotInitialized)));
        assert_eq!(Error::ConnectionClosed.to_string(), "connection closed");
    }

    /// Was `v2_outcomes_map_onto_results` (with `from_outcome_v2`): the one generic
    /// `from_outcome` maps a v2 outcome the same way. That a v1 result is never taken for a v2
    /// one (and back) is now the type system's: an `Outcome<V2>` carries only v2 results.
    #[cfg(feature = "unstable_protocol_v2")]
    #[test]
    fn v2_outcomes_map_onto_results() {
        use acp_proto::{V2, v2};
        let ack: v2::PromptResponse = serde_json::from_value(serde_json::json!({"messageId": "u1"})).unwrap();
        let response = v2::Response::from(ack.clone());
        assert_eq!(Error::from_outcome(Outcome::<V2>::Result(response.clone())).unwrap(), response);
        assert_eq!(crate::v2::prompt_ack(Outcome::Result(response)).unwrap(), ack);
        let other: v2::NewSessionResponse = serde_json::from_value(serde_json::json!({"sessionId": "s1"})).unwrap();
        let other = v2::Response::from(other);
        assert!(matches!(crate::v2::prompt_ack(Outcome::Result(other)), Err(Error::UnexpectedResponse)));
        assert!(matches!(crate::v2::prompt_ack(Outcome::Cancelled), Err(Error::Cancelled)));
        assert!(matches!(Error::from_outcome(Outcome::<V2>::Cancelled), Err(Error::Cancelled)));
        assert!(matches!(Error::from_outcome(Outcome::<V2>::TimedOut), Err(Error::TimedOut)));
        assert!(matches!(Error::from_outcome(Outcome::<V2>::ConnectionClosed), Err(Error::ConnectionClosed)));
        let e = Error::from_outcome(Outcome::<V2>::Error(RpcError::internal_error("x"))).unwrap_err();
        assert_eq!(e.rpc_code(), Some(-32603));
    }

    #[test]
    fn handlers_answer_a_failed_call_with_question_mark() {
        assert_eq!(RpcError::from(Error::Cancelled), RpcError::request_cancelled());
        let e = RpcError::from(Error::Send(SendError::NotInitialized));
        assert_eq!(e.code, acp_proto::ErrorCode::INTERNAL_ERROR);
        assert_eq!(e.data.unwrap()["reason"], "refused locally: the initialize handshake has not completed");
    }
}
