//! `acp-bench`: see the [library docs](acp_bench) and `shared/bench/WORKLOADS.md`.

fn main() {
    std::process::exit(acp_bench::cli::main(std::env::args().skip(1).collect()));
}
