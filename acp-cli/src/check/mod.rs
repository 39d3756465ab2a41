//! `acp check agent -- AGENT_CMD...` and `acp check client -- CLIENT_CMD...`: conformance
//! checks of an ACP agent or client, each requirement with an id, a level and a spec citation
//! (see [`report`]); with `--protocol 2` the v2 checks ([`v2`]); `acp check --coverage` the
//! clauses of the spec they cover ([`coverage`]).

pub mod agent;
mod children;
pub mod client;
pub mod coverage;
pub mod report;
pub mod v2;

use report::Requirement;

/// Every requirement `acp check` knows, agent and client, v1 and v2 (whether or not this
/// build speaks v2): the ids the coverage roster may name.
pub fn requirements() -> Vec<&'static Requirement> {
    let mut all: Vec<&'static Requirement> = Vec::new();
    all.extend(agent::requirements::ALL);
    all.extend(client::requirements::ALL);
    all.extend(v2::requirements::ALL);
    all
}
