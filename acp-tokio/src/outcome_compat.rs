//! Transitional (issue 29 step 2): the engine's untyped `compat::AnyOutcome` mapped onto a
//! result as `acp_runtime::Error::from_outcome` maps a version's `Outcome<P>`, until this
//! adapter is generic over the protocol (then this file goes). A result of the other version
//! is [`Error::UnexpectedResponse`], as before.

use acp_proto::{Outcome, Protocol, Response, compat::AnyOutcome};

use crate::Error;

/// The failures every version shares, as `Outcome<P>`.
fn common<P: Protocol>(outcome: AnyOutcome) -> Result<Outcome<P>, Error> {
    match outcome {
        AnyOutcome::Error(e) => Ok(Outcome::Error(e)),
        AnyOutcome::InvalidResult(e) => Ok(Outcome::InvalidResult(e)),
        AnyOutcome::TimedOut => Ok(Outcome::TimedOut),
        AnyOutcome::Cancelled => Ok(Outcome::Cancelled),
        AnyOutcome::ConnectionClosed => Ok(Outcome::ConnectionClosed),
        _ => Err(Error::UnexpectedResponse),
    }
}

/// A v1 request's result.
pub(crate) fn v1_result(outcome: AnyOutcome) -> Result<Response, Error> {
    match outcome {
        AnyOutcome::Result(response) => Ok(response),
        other => Error::from_outcome(common::<acp_proto::V1>(other)?),
    }
}

/// A v2 request's result.
#[cfg(feature = "unstable_protocol_v2")]
pub(crate) fn v2_result(outcome: AnyOutcome) -> Result<acp_proto::v2::Response, Error> {
    match outcome {
        AnyOutcome::ResultV2(response) => Ok(response),
        other => Error::from_outcome(common::<acp_proto::V2>(other)?),
    }
}
