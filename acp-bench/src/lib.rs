//! # acp-bench: the benchmark workloads of `shared/bench/WORKLOADS.md` for acp-rs
//!
//! One binary, `acp-bench`, with the two programs the workloads define and the in-process
//! configurations this project adds:
//!
//! ```text
//! acp-bench agent  [--adapter tokio|blocking] --updates N
//! acp-bench client --workload w1|w2|w3 [--updates N] [--prompts N] [--sessions N]
//!                  [--adapter tokio|blocking] --transport stdio -- AGENT_ARGV...
//! acp-bench client --workload w1|w2|w3 --transport duplex     # tokio-duplex, one process
//! acp-bench client --workload w1|w2|w3 --transport direct     # core-direct, one thread
//! acp-bench client --config tokio-stdio|blocking-stdio|tokio-duplex|core-direct ...
//! acp-bench w0     [--messages U]                              # W0: serde_json vs the core
//! acp-bench floor  [--messages U]                              # W0's pipe phases
//! acp-bench client --config floor --workload w2 [--prompts R]   # W2's floor: a line ping-ponged over pipes
//! ```
//!
//! The client prints `METRIC <name>=<value> <unit>` lines and validates every run (stop
//! reasons, update counts per session); a failed validation exits non-zero without metrics.
//! It runs against any agent that follows the workloads (the agent command line comes after
//! `--`; `--updates N` is appended), and our agent serves any client that follows them.
//!
//! ## Measurement notes
//!
//! * `agent_peak_rss_kb` is the agent's `VmHWM` from `/proc/<pid>/status`, read by the client
//!   just before it closes the agent's stdin. WORKLOADS.md takes GNU time's `%M`, which is
//!   `ru_maxrss` of the waited process: for a process without children both are the kernel's
//!   high-water mark of the resident set. At that point the agent has sent everything and
//!   answered every prompt; what follows is its shutdown on EOF. (So no `/usr/bin/time` is
//!   needed; with one installed, `-- /usr/bin/time -f %M -o FILE AGENT...` gives the same
//!   figure in FILE, and this line then reports `time`'s own.)
//! * `core-direct` hands the agent's queued bytes to the client every 64 KiB, as an adapter
//!   writes a batch to its pipe, instead of letting a megabyte pile up first: the working set
//!   stays in cache, as it does over a real pipe.
//! * `tokio-duplex` runs on one current-thread runtime by default (`--threads N` otherwise).
//!
//! | module | what |
//! |---|---|
//! | [`wire`] | the workload constants (the 64-byte chunk, the exact update line) and the agent both adapters serve |
//! | [`metrics`] | the `METRIC` format, nearest-rank percentiles, peak RSS |
//! | [`spec`] | the workload parameters and the client's validation |
//! | [`tokio_impl`] | agent and client on `acp-tokio` (stdio and the in-memory duplex) |
//! | [`blocking_impl`] | agent and client on `acp-blocking` (stdio) |
//! | [`direct`] | `core-direct`: two `acp_proto::Connection`s wired buffer to buffer |
//! | [`w0`] | W0: the core's decode + dispatch + encode beside plain `serde_json` |
//! | [`floor`] | W0's pipe phases, the end-to-end floor for W1 over a pipe; and W2's floor, one line ping-ponged over a pair of pipes |
//! | [`cli`] | argument parsing and the subcommands |

pub mod blocking_impl;
pub mod cli;
pub mod direct;
pub mod floor;
pub mod metrics;
pub mod spec;
pub mod tokio_impl;
pub mod w0;
pub mod wire;
