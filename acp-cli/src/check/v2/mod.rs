//! `acp check agent --protocol 2` and `acp check client --protocol 2`: the ACP v2 (Preview)
//! checks. The requirements are defined in every build (`requirements`); the scenarios
//! only with the feature `unstable_protocol_v2`.

pub(crate) mod requirements;

#[cfg(feature = "unstable_protocol_v2")]
pub mod agent;
#[cfg(feature = "unstable_protocol_v2")]
pub mod client;
