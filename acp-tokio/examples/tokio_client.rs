//! An ACP client on tokio: starts an agent, opens a session, prompts it and prints the turn.
//!
//! ```text
//! tokio_client [--agent PATH] [TEXT...]
//! tokio_client --workload w1 [--updates N] [-- AGENT_ARGV...]
//! ```
//!
//! `--runtime async-std` (feature `async-std`) runs the same client on async-std.
//!
//! The first form spawns PATH (default: the `tokio_echo_agent` example built next to this
//! binary; `cargo build -p acp-tokio --examples`), lets it read and write files, allows what it
//! asks, prompts it with TEXT (default `hello`) and prints every update and the stop reason. Try
//! `tokio_client read Cargo.toml`, `tokio_client permission`, `tokio_client storm 5`. Any ACP
//! agent works: the blocking adapter's `echo_agent` speaks the same commands
//! (`tokio_client --agent target/debug/examples/echo_agent storm 5`).
//!
//! The second form runs the update storm W1 of `shared/bench/WORKLOADS.md`: one prompt to
//! `AGENT_ARGV... --updates N` (default 100 000), timed until the answer and every update
//! arrived; it prints `METRIC` lines with the throughput and this process's peak RSS.

use std::path::PathBuf;
use std::time::Instant;

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::types::*;
use acp_tokio::{Client, ClientConnection, ClientContext, ClientOptions};

struct PrintingClient;

impl Client for PrintingClient {
    async fn request_permission(
        &self,
        request: RequestPermissionRequest,
        _cx: ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        let allow = request
            .options
            .iter()
            .find(|o| matches!(o.kind, PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways));
        let outcome = match allow {
            Some(option) => RequestPermissionOutcome::selected(option.option_id.clone()),
            None => RequestPermissionOutcome::Cancelled,
        };
        eprintln!("[permission asked: {:?}; answering {outcome:?}]", request.tool_call.title);
        Ok(RequestPermissionResponse::new(outcome))
    }

    async fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _cx: ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        std::fs::read_to_string(&request.path)
            .map(ReadTextFileResponse::new)
            .map_err(|e| RpcError::resource_not_found(format!("{}: {e}", request.path)))
    }

    async fn write_text_file(
        &self,
        request: WriteTextFileRequest,
        _cx: ClientContext,
    ) -> Result<WriteTextFileResponse, RpcError> {
        std::fs::write(&request.path, request.content).map_err(|e| RpcError::internal_error(e.to_string()))?;
        Ok(WriteTextFileResponse::default())
    }

    async fn session_update(&self, notification: SessionNotification) {
        eprintln!("[update outside a turn: {:?}]", notification.update);
    }
}

/// The `tokio_echo_agent` example next to this binary.
fn echo_agent() -> PathBuf {
    let exe = std::env::current_exe().expect("the current executable");
    exe.with_file_name(format!("tokio_echo_agent{}", std::env::consts::EXE_SUFFIX))
}

/// This process's peak resident set (`VmHWM`), in KiB.
fn peak_rss_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// What to do once connected.
struct Plan {
    workload: Option<String>,
    updates: u64,
    text: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut words = Vec::new();
    let mut plan = Plan { workload: None, updates: 100_000, text: String::new() };
    let mut async_std = false;
    let mut agent_argv: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--agent" => agent_argv = vec![args.next().ok_or("--agent needs a path")?],
            "--workload" => plan.workload = Some(args.next().ok_or("--workload needs a value")?),
            "--updates" => plan.updates = args.next().ok_or("--updates needs a value")?.parse()?,
            "--runtime" => async_std = args.next().as_deref() == Some("async-std"),
            "--" => agent_argv = args.by_ref().collect(),
            _ => words.push(arg),
        }
    }
    if agent_argv.is_empty() {
        agent_argv.push(echo_agent().display().to_string());
    }
    let mut command = std::process::Command::new(&agent_argv[0]);
    command.args(&agent_argv[1..]);
    if plan.workload.is_some() {
        command.arg("--updates").arg(plan.updates.to_string());
    }
    plan.text = if words.is_empty() { "hello".to_owned() } else { words.join(" ") };
    if async_std {
        #[cfg(feature = "async-std")]
        return async_std::task::block_on(async move {
            run(acp_tokio::async_std::spawn(PrintingClient, command, ClientOptions::default())?, plan).await
        });
        #[cfg(not(feature = "async-std"))]
        return Err("built without the `async-std` feature".into());
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        run(ClientConnection::spawn(PrintingClient, command, ClientOptions::default())?, plan).await
    })
}

/// Everything after the spawn: the same on either runtime.
async fn run(conn: ClientConnection, plan: Plan) -> Result<(), Box<dyn std::error::Error>> {
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.fs.read_text_file = true;
    init.client_capabilities.fs.write_text_file = true;
    init.client_info = Some(Implementation::new("acp-tokio-client", env!("CARGO_PKG_VERSION")));
    let agent = conn.initialize(init).await?;
    eprintln!("[connected to {:?}]", agent.agent_info.map(|i| i.name));
    let cwd = std::env::current_dir()?.display().to_string();
    let session = conn.new_session(NewSessionRequest::new(cwd, Vec::new())).await?.session_id;

    if let Some(workload) = plan.workload {
        if workload != "w1" {
            return Err(format!("unknown workload `{workload}`").into());
        }
        let t0 = Instant::now();
        let mut turn = conn.prompt(PromptRequest::new(session, vec![ContentBlock::text("bench")])).await?;
        let mut count = 0u64;
        while turn.next_update().await.is_some() {
            count += 1;
        }
        let stop = turn.finish().await?;
        let seconds = t0.elapsed().as_secs_f64();
        if stop != StopReason::EndTurn || count != plan.updates {
            return Err(format!("validation failed: {count} updates, {stop:?}").into());
        }
        println!("METRIC w1_seconds={seconds:.3} s");
        println!("METRIC w1_updates_per_s={:.0} 1/s", plan.updates as f64 / seconds);
        if let Some(kb) = peak_rss_kb() {
            println!("METRIC client_peak_rss_kb={kb} kB");
        }
    } else {
        let request = PromptRequest::new(session, vec![ContentBlock::text(plan.text)]);
        let stop = conn
            .prompt_with(request, |update| match update {
                SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => {
                    println!("{}", t.text)
                }
                other => println!("{other:?}"),
            })
            .await?;
        println!("[stop reason: {stop:?}]");
    }
    let status = conn.close().await?;
    eprintln!("[agent exited: {status:?}]");
    Ok(())
}
