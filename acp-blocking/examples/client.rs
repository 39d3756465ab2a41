//! An ACP client built on `acp-blocking`: spawns an agent, prompts it once and prints the turn.
//!
//! ```text
//! client [--agent PATH] [TEXT...]
//! client --workload w1 [--updates N] -- AGENT_ARGV...
//! ```
//!
//! The first form spawns PATH (default: the `echo_agent` example next to this binary), lets it
//! read and write files, allows what it asks, prompts it with TEXT (default `hello`) and prints
//! every update and the stop reason. Try `client read Cargo.toml`, `client permission`,
//! `client storm 5`.
//!
//! The second form runs the update-storm workload W1 of `shared/bench/WORKLOADS.md`: one prompt
//! to `AGENT_ARGV... --updates N` (default 100 000), timed until the response and every update
//! arrived; it prints `METRIC` lines, including its own peak RSS and the agent's (`VmHWM`).

use std::process::Command;
use std::time::{Duration, Instant};

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use acp_blocking::{Client, ClientConnection, ClientContext, ClientOptions, Error};

/// Allows every permission ask once and serves the local file system.
struct Terminal;

impl Client for Terminal {
    fn request_permission(
        &self,
        request: RequestPermissionRequest,
        _: &ClientContext,
    ) -> Result<RequestPermissionResponse, RpcError> {
        eprintln!("[permission] {:?}: allowing once", request.tool_call.title);
        let allow = request.options.iter().find(|o| o.kind == PermissionOptionKind::AllowOnce);
        let outcome = allow
            .map_or(RequestPermissionOutcome::Cancelled, |o| RequestPermissionOutcome::selected(o.option_id.clone()));
        Ok(RequestPermissionResponse::new(outcome))
    }

    fn read_text_file(
        &self,
        request: ReadTextFileRequest,
        _: &ClientContext,
    ) -> Result<ReadTextFileResponse, RpcError> {
        let text = std::fs::read_to_string(&request.path).map_err(|e| RpcError::resource_not_found(e.to_string()))?;
        Ok(ReadTextFileResponse::new(text))
    }

    fn write_text_file(
        &self,
        request: WriteTextFileRequest,
        _: &ClientContext,
    ) -> Result<WriteTextFileResponse, RpcError> {
        std::fs::write(&request.path, request.content).map_err(|e| RpcError::internal_error(e.to_string()))?;
        Ok(WriteTextFileResponse::default())
    }

    fn session_update(&self, notification: SessionNotification) {
        println!("[outside a turn] {:?}", notification.update);
    }
}

/// `VmHWM` (peak resident set) of a process, in KiB.
fn peak_rss_kb(pid: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn handshake(conn: &ClientConnection, fs: bool) -> Result<SessionId, Error> {
    let mut init = InitializeRequest::new(ProtocolVersion::V1);
    init.client_capabilities.fs.read_text_file = fs;
    init.client_capabilities.fs.write_text_file = fs;
    init.client_info = Some(Implementation::new("acp-blocking-client", env!("CARGO_PKG_VERSION")));
    conn.with_timeout(Duration::from_secs(10)).initialize(init)?;
    Ok(conn.new_session(NewSessionRequest::new("/tmp", vec![]))?.session_id)
}

fn run(args: Vec<String>) -> Result<(), Error> {
    let mut args = args.into_iter().peekable();
    let mut agent = std::env::current_exe()?.with_file_name("echo_agent").into_os_string().into_string().ok();
    let mut workload = None;
    let mut updates = 100_000u64;
    let mut rest = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--agent" => agent = args.next(),
            "--workload" => workload = args.next(),
            "--updates" => updates = args.next().and_then(|n| n.parse().ok()).unwrap_or(updates),
            "--" => rest.extend(args.by_ref()),
            _ => rest.push(arg),
        }
    }
    if workload.as_deref() == Some("w1") {
        let mut command = Command::new(rest.first().map_or("echo_agent", String::as_str));
        command.args(rest.iter().skip(1)).args(["--updates", &updates.to_string()]);
        let conn = ClientConnection::spawn((), command, ClientOptions::default())?;
        let session = handshake(&conn, false)?;
        let t0 = Instant::now();
        let mut counted = 0u64;
        let stop = conn.prompt_with(PromptRequest::new(session, vec!["bench".into()]), |update| {
            counted += u64::from(matches!(update, SessionUpdate::AgentMessageChunk(_)));
        })?;
        let seconds = t0.elapsed().as_secs_f64();
        assert_eq!((stop, counted), (StopReason::EndTurn, updates), "validation failed");
        let agent_pid = conn.child_id().map(|id| id.to_string()).unwrap_or_default();
        println!("METRIC w1_seconds={seconds:.3} s");
        println!("METRIC w1_updates_per_s={:.0} 1/s", updates as f64 / seconds);
        println!("METRIC agent_peak_rss_kb={} KiB", peak_rss_kb(&agent_pid).unwrap_or(0));
        conn.close()?;
        println!("METRIC client_peak_rss_kb={} KiB", peak_rss_kb("self").unwrap_or(0));
        return Ok(());
    }
    let conn = ClientConnection::spawn(Terminal, Command::new(agent.unwrap_or_default()), ClientOptions::default())?;
    let session = handshake(&conn, true)?;
    let text = if rest.is_empty() { "hello".to_owned() } else { rest.join(" ") };
    let mut turn = conn.prompt(PromptRequest::new(session, vec![text.into()]))?;
    for update in &mut turn {
        match update {
            SessionUpdate::AgentMessageChunk(ContentChunk { content: ContentBlock::Text(t), .. }) => {
                println!("{}", t.text)
            }
            other => println!("{other:?}"),
        }
    }
    println!("stop reason: {:?}", turn.finish()?);
    println!("agent exited: {:?}", conn.close()?);
    Ok(())
}

fn main() {
    if let Err(e) = run(std::env::args().skip(1).collect()) {
        eprintln!("client: {e}");
        std::process::exit(1);
    }
}
