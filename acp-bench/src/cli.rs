//! Argument parsing and the subcommands.

use std::process::Command;

use crate::metrics::{Metric, peak_rss_kb, print};
use crate::spec::{Spec, Workload};

/// Usage text.
pub const USAGE: &str = "\
usage:
  acp-bench agent  [--adapter tokio|blocking] [--updates N] [--listen-ws]
  acp-bench client --workload w1|w2|w3 [--updates N] [--prompts N] [--sessions N]
                   [--config tokio-stdio|blocking-stdio|tokio-duplex|tokio-ws|tokio-http|core-direct|floor]
                   [--adapter tokio|blocking] [--transport stdio|duplex|direct] [-- AGENT_ARGV...]
                   [--threads N]   (tokio-duplex: runtime workers; default 1 = current-thread)
  acp-bench w0     [--messages U]
  acp-bench floor  [--messages U]
  acp-bench profile [--messages U] -- PHASE     (one W0 phase alone, for callgrind/perf)

The client spawns AGENT_ARGV... --updates N (default: this binary's own agent on the same
adapter) and prints METRIC lines; see shared/bench/WORKLOADS.md. `tokio-ws`: the agent serves
remote ACP over WebSocket on a loopback port (`agent --listen-ws` prints `listening PORT`), the
client connects to it; `tokio-http`: the same server, reached over Streamable HTTP (HTTP/2).
`floor` (W2 only): no protocol, one 120-byte line ping-ponged with `acp-bench floor-echo` (or
AGENT_ARGV, run as given) over pipes with blocking read/write: the floor of a stdio round trip.";

/// Which adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapter {
    /// acp-tokio.
    Tokio,
    /// acp-blocking.
    Blocking,
}

/// What connects agent and client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// OS pipes to a child process.
    Stdio,
    /// `tokio::io::duplex` in this process.
    Duplex,
    /// Two connections, one thread, no runtime.
    Direct,
    /// A WebSocket on loopback to a child process (`acp_tokio::remote`).
    Ws,
    /// Streamable HTTP (POSTs, SSE streams) on loopback to a child process.
    Http,
    /// No protocol: W2's round trip as one line ping-ponged over pipes ([`crate::floor`]).
    Floor,
}

/// The agent's command line with `--updates N` appended.
pub fn agent_command(argv: &[String], updates: u64) -> Result<Command, String> {
    let (program, args) = argv.split_first().ok_or("no agent command line")?;
    let mut command = Command::new(program);
    command.args(args).args(["--updates", &updates.to_string()]);
    Ok(command)
}

fn value<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
    v.ok_or_else(|| format!("{flag} needs a value"))?.parse().map_err(|_| format!("bad value for {flag}"))
}

fn adapter(s: &str) -> Result<Adapter, String> {
    match s {
        "tokio" => Ok(Adapter::Tokio),
        "blocking" => Ok(Adapter::Blocking),
        other => Err(format!("unknown adapter `{other}`")),
    }
}

/// Runs `acp-bench` with `args` (without the program name). Returns the exit code.
pub fn main(args: Vec<String>) -> i32 {
    match dispatch(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("acp-bench: {e}");
            1
        }
    }
}

fn dispatch(args: Vec<String>) -> Result<(), String> {
    let mut args = args.into_iter();
    let command = args.next().unwrap_or_default();
    let mut adapter_choice = Adapter::Tokio;
    let mut transport = Transport::Stdio;
    let mut workload = None;
    let (mut updates, mut prompts, mut sessions, mut messages) = (None, None, None, 100_000usize);
    let mut buffered = true;
    let mut threads = 1usize;
    let mut argv = Vec::new();
    let mut listen_ws = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--adapter" => adapter_choice = adapter(&value::<String>("--adapter", args.next())?)?,
            "--transport" => {
                transport = match value::<String>("--transport", args.next())?.as_str() {
                    "stdio" => Transport::Stdio,
                    "duplex" => Transport::Duplex,
                    "direct" => Transport::Direct,
                    "ws" => Transport::Ws,
                    "http" => Transport::Http,
                    other => return Err(format!("unknown transport `{other}`")),
                }
            }
            "--config" => {
                (adapter_choice, transport) = match value::<String>("--config", args.next())?.as_str() {
                    "tokio-stdio" => (Adapter::Tokio, Transport::Stdio),
                    "blocking-stdio" => (Adapter::Blocking, Transport::Stdio),
                    "tokio-duplex" => (Adapter::Tokio, Transport::Duplex),
                    "core-direct" => (Adapter::Tokio, Transport::Direct),
                    "tokio-ws" => (Adapter::Tokio, Transport::Ws),
                    "tokio-http" => (Adapter::Tokio, Transport::Http),
                    "floor" => (Adapter::Blocking, Transport::Floor),
                    other => return Err(format!("unknown config `{other}`")),
                }
            }
            "--workload" => {
                let w = value::<String>("--workload", args.next())?;
                workload = Some(Workload::parse(&w).ok_or_else(|| format!("unknown workload `{w}`"))?);
            }
            "--updates" => updates = Some(value("--updates", args.next())?),
            "--prompts" => prompts = Some(value("--prompts", args.next())?),
            "--sessions" => sessions = Some(value("--sessions", args.next())?),
            "--messages" => messages = value("--messages", args.next())?,
            "--threads" => threads = value("--threads", args.next())?,
            "--buffered" => buffered = true,
            "--listen-ws" => listen_ws = true,
            "--unbuffered" => buffered = false,
            "--" => argv.extend(args.by_ref()),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    match command.as_str() {
        "agent" => {
            let updates = updates.unwrap_or(0);
            match adapter_choice {
                Adapter::Tokio if listen_ws => crate::tokio_impl::serve_ws(updates),
                Adapter::Blocking if listen_ws => Err("--listen-ws serves on tokio only".into()),
                Adapter::Tokio => crate::tokio_impl::serve_stdio(updates),
                Adapter::Blocking => crate::blocking_impl::serve_stdio(updates),
            }
        }
        "client" => {
            let workload = workload.ok_or("--workload is required")?;
            let mut spec = Spec::new(workload);
            spec.updates = updates.unwrap_or(spec.updates);
            spec.prompts = prompts.unwrap_or(spec.prompts);
            spec.sessions = sessions.unwrap_or(spec.sessions);
            if spec.sessions == 0 || spec.prompts == 0 {
                return Err("--sessions and --prompts must be at least 1".into());
            }
            // The floor runs its own echo (or AGENT_ARGV as given), not an agent.
            if argv.is_empty() && transport != Transport::Floor {
                let exe = std::env::current_exe().map_err(|e| e.to_string())?;
                let name = if adapter_choice == Adapter::Tokio { "tokio" } else { "blocking" };
                argv = vec![exe.display().to_string(), "agent".into(), "--adapter".into(), name.into()];
            }
            let mut metrics: Vec<Metric> = match (transport, adapter_choice) {
                (Transport::Stdio, Adapter::Tokio) => crate::tokio_impl::client_stdio(spec, &argv)?,
                (Transport::Stdio, Adapter::Blocking) => crate::blocking_impl::client_stdio(spec, &argv)?,
                (Transport::Duplex, Adapter::Tokio) => crate::tokio_impl::client_duplex(spec, threads)?,
                (Transport::Duplex, Adapter::Blocking) => return Err("duplex runs on tokio only".into()),
                (Transport::Direct, _) => crate::direct::client(spec)?,
                (Transport::Ws, Adapter::Tokio) => crate::tokio_impl::client_ws(spec, &argv)?,
                (Transport::Ws, Adapter::Blocking) => return Err("ws runs on tokio only".into()),
                (Transport::Http, Adapter::Tokio) => crate::tokio_impl::client_http(spec, &argv)?,
                (Transport::Http, Adapter::Blocking) => return Err("http runs on tokio only".into()),
                (Transport::Floor, _) => crate::floor::client_rtt(spec, &argv)?,
            };
            if let Some(kb) = peak_rss_kb("self") {
                metrics.push(Metric::int("client_peak_rss_kb", kb, "kB"));
            }
            print(&metrics);
            Ok(())
        }
        "w0" => {
            print(&crate::w0::run(messages));
            Ok(())
        }
        "floor" => {
            print(&crate::floor::run(messages)?);
            Ok(())
        }
        "profile" => crate::w0::profile(argv.first().map_or("core_roundtrip", String::as_str), messages),
        "floor-child" => crate::floor::child(messages, buffered),
        "floor-echo" => crate::floor::echo(),
        "" | "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    }
}
