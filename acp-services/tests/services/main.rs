//! acp-services' integration tests, one binary: each module is a former `tests/<name>.rs` (its
//! docs at its top), so `cargo test -p acp-services --test services <name>::` runs what
//! `--test <name>` ran. `orphans.rs` stays a binary of its own: it makes the whole test process
//! a child subreaper and kills its children.

#[path = "../common/mod.rs"]
mod common;

mod confinement;
mod fs_race;
mod fs_sandbox;
mod services;
mod terminals;
mod unstable_literals;
mod vectors;
