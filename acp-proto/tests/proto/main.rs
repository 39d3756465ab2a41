//! acp-proto's integration tests, one binary: each module is a former `tests/<name>.rs` (its
//! docs at its top), so `cargo test -p acp-proto --test proto <name>::` runs what
//! `--test <name>` ran. They share `common` (two connections wired back to back).

mod common;

mod acceptor;
mod connection;
mod turns;
