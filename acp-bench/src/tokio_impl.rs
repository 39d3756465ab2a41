//! Agent and client on `acp-tokio`.
//!
//! Both stdio programs run on a current-thread runtime (one thread each: the pipe already gives
//! each process its own core). `tokio-duplex` runs both ends in one process over
//! `tokio::io::duplex(64 KiB)`, by default on one current-thread runtime (`--threads N` for a
//! multi-thread one: on two cores it is as fast for W1/W3 and 3× slower for W2, where every
//! round trip then crosses threads twice).

use std::time::Instant;

use acp_proto::RpcError;
use acp_proto::types::*;
use acp_tokio::{Agent, AgentOptions, ClientConnection, ClientOptions, PromptContext, RequestContext};

use crate::metrics::{Metric, peak_rss_kb};
use crate::spec::{Measured, Spec, Workload, check_prompt, metrics};
use crate::wire::{BenchAgent, chunk_update, expected_stop, is_chunk};

/// The workloads' agent on this adapter.
impl Agent for BenchAgent {
    async fn initialize(&self, _: InitializeRequest, _: RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }

    async fn new_session(&self, _: NewSessionRequest, _: RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new(self.next_session()))
    }

    async fn prompt(&self, _: PromptRequest, cx: PromptContext) -> Result<PromptResponse, RpcError> {
        for _ in 0..self.updates() {
            cx.send_update(chunk_update()).await?;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

/// `acp-bench agent --adapter tokio`: serves stdin/stdout until stdin ends.
pub fn serve_stdio(updates: u64) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let result = runtime.block_on(acp_tokio::serve_stdio(BenchAgent::new(updates)));
    // A reader thread blocked on stdin must not keep the process alive.
    runtime.shutdown_background();
    result.map_err(|e| e.to_string())
}

/// `agent --listen-ws`: serves the bench agent over WebSocket on a loopback port (printed as
/// `listening PORT` on stdout) until stdin ends.
pub fn serve_ws(updates: u64) -> Result<(), String> {
    use acp_tokio::remote::{AgentBackend, WsServerOptions};
    use tokio::io::AsyncReadExt;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(err)?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.map_err(err)?;
        println!("listening {}", listener.local_addr().map_err(err)?.port());
        let backend = AgentBackend::new(move || BenchAgent::new(updates), AgentOptions::default());
        // The parent closes our stdin to stop us.
        let stdin_closed = async {
            let mut sink = [0u8; 64];
            let mut stdin = tokio::io::stdin();
            while stdin.read(&mut sink).await.is_ok_and(|n| n > 0) {}
        };
        acp_tokio::remote::serve_ws(listener, backend, WsServerOptions::default(), stdin_closed).await.map_err(err)
    })?;
    runtime.shutdown_background();
    Ok(())
}

/// `tokio-ws`: spawns `argv --updates N --listen-ws`, connects to its WebSocket and runs the
/// workload.
pub fn client_ws(spec: Spec, argv: &[String]) -> Result<Vec<Metric>, String> {
    client_remote(spec, argv, Remote::Ws)
}

/// `tokio-http`: the same agent, reached over Streamable HTTP (HTTP/2 by prior knowledge, as
/// the RFD requires HTTP/2 and our server speaks h2c): POSTs and SSE streams.
pub fn client_http(spec: Spec, argv: &[String]) -> Result<Vec<Metric>, String> {
    client_remote(spec, argv, Remote::Http)
}

/// The remote profile a client speaks.
#[derive(Debug, Clone, Copy)]
enum Remote {
    Ws,
    Http,
}

/// Connects to `port` with `remote`'s client.
async fn connect_remote(port: &str, remote: Remote) -> Result<ClientConnection, String> {
    let conn = match remote {
        Remote::Ws => {
            let url = format!("ws://127.0.0.1:{port}/acp");
            acp_tokio::remote::connect_ws((), &url, acp_tokio::remote::WsClientOptions::default()).await
        }
        Remote::Http => {
            let url = format!("http://127.0.0.1:{port}/acp");
            let options = acp_tokio::remote::HttpClientOptions {
                http2_prior_knowledge: true,
                ..acp_tokio::remote::HttpClientOptions::default()
            };
            acp_tokio::remote::connect_http((), &url, options).await
        }
    };
    Ok(conn.map_err(err)?.0)
}

/// Spawns `argv --updates N --listen-ws` (which serves both profiles), connects and runs the
/// workload.
fn client_remote(spec: Spec, argv: &[String], remote: Remote) -> Result<Vec<Metric>, String> {
    use std::io::BufRead;
    use std::process::Stdio;
    let mut command = crate::cli::agent_command(argv, spec.updates)?;
    command.arg("--listen-ws").stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = command.spawn().map_err(err)?;
    let mut line = String::new();
    let stdout = child.stdout.take().ok_or("no stdout")?;
    std::io::BufReader::new(stdout).read_line(&mut line).map_err(err)?;
    let port = line.trim().strip_prefix("listening ").ok_or_else(|| format!("the agent said {line:?}"))?.to_owned();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(err)?;
    let result = runtime.block_on(async {
        let conn = connect_remote(&port, remote).await?;
        let measured = run(&conn, spec).await?;
        let agent_rss = peak_rss_kb(&child.id().to_string());
        conn.close().await.map_err(err)?;
        let mut metrics = metrics(&spec, &measured)?;
        if let Some(kb) = agent_rss {
            metrics.push(Metric::int("agent_peak_rss_kb", kb, "kB"));
        }
        Ok(metrics)
    });
    // The runtime's sockets close with it: a client's HTTP connections left open would hold
    // the server's graceful shutdown (it waits for every HTTP connection to end).
    drop(runtime);
    drop(child.stdin.take());
    let _ = child.wait();
    result
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The prompt every workload sends.
fn prompt(session: &SessionId) -> PromptRequest {
    PromptRequest::new(session.clone(), vec![ContentBlock::text("bench")])
}

/// Runs one prompt to completion: its response and every update before it. Returns the
/// chunk updates counted.
async fn run_prompt(conn: &ClientConnection, session: &SessionId) -> Result<u64, String> {
    let mut turn = conn.prompt(prompt(session)).await.map_err(err)?;
    let mut counted = 0;
    while let Some(update) = turn.next_update().await {
        counted += u64::from(is_chunk(&update));
    }
    let stop = turn.finish().await.map_err(err)?;
    if stop != expected_stop() {
        return Err(format!("stop reason {stop:?}"));
    }
    Ok(counted)
}

/// Handshake and sessions (untimed), then the workload. Works over any transport.
pub async fn run(conn: &ClientConnection, spec: Spec) -> Result<Measured, String> {
    conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await.map_err(err)?;
    let mut sessions = Vec::new();
    for _ in 0..spec.sessions {
        sessions.push(conn.new_session(NewSessionRequest::new("/tmp", vec![])).await.map_err(err)?.session_id);
    }
    let mut measured = Measured::default();
    match spec.workload {
        Workload::W1 | Workload::W2 => {
            let session = &sessions[0];
            let mut counted = 0;
            if spec.workload == Workload::W2 {
                measured.samples.reserve(spec.prompts as usize);
            }
            let t0 = Instant::now();
            for k in 1..=spec.prompts {
                let start = Instant::now();
                counted += run_prompt(conn, session).await?;
                if spec.workload == Workload::W2 {
                    measured.samples.push(start.elapsed());
                }
                check_prompt(&spec, 0, k, counted)?;
            }
            measured.elapsed = t0.elapsed();
            measured.updates = counted;
        }
        Workload::W3 => {
            let t0 = Instant::now();
            let mut workers = tokio::task::JoinSet::new();
            for (i, session) in sessions.into_iter().enumerate() {
                let conn = conn.clone();
                workers.spawn(async move {
                    let mut counted = 0;
                    for k in 1..=spec.prompts {
                        counted += run_prompt(&conn, &session).await?;
                        check_prompt(&spec, i, k, counted)?;
                    }
                    Ok::<u64, String>(counted)
                });
            }
            while let Some(done) = workers.join_next().await {
                measured.updates += done.map_err(err)??;
            }
            measured.elapsed = t0.elapsed();
        }
    }
    Ok(measured)
}

/// `tokio-stdio`: spawns `argv --updates N` and runs the workload against it.
pub fn client_stdio(spec: Spec, argv: &[String]) -> Result<Vec<Metric>, String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(err)?;
    runtime.block_on(async {
        let command = crate::cli::agent_command(argv, spec.updates)?;
        let conn = ClientConnection::spawn((), command, ClientOptions::default()).map_err(err)?;
        let measured = run(&conn, spec).await;
        // Read before closing its stdin: the agent has done all its work and still lives.
        let agent_rss = conn.child_id().and_then(|pid| peak_rss_kb(&pid.to_string()));
        let status = conn.close().await.map_err(err)?;
        let mut metrics = metrics(&spec, &measured.map_err(|e| format!("{e}; agent stderr: {}", conn.stderr_tail()))?)?;
        if let Some(status) = status
            && !status.success()
        {
            eprintln!("acp-bench: the agent exited with {status}");
        }
        if let Some(kb) = agent_rss {
            metrics.push(Metric::int("agent_peak_rss_kb", kb, "kB"));
        }
        Ok(metrics)
    })
}

/// `tokio-duplex`: our agent and client in this process over one `tokio::io::duplex(64 KiB)`.
pub fn client_duplex(spec: Spec, threads: usize) -> Result<Vec<Metric>, String> {
    let runtime = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build()
    }
    .map_err(err)?;
    runtime.block_on(async {
        let (client_end, agent_end) = tokio::io::duplex(64 * 1024);
        let (reader, writer) = tokio::io::split(agent_end);
        let agent = BenchAgent::new(spec.updates);
        let served = tokio::spawn(acp_tokio::serve(agent, reader, writer, AgentOptions::default()));
        let (reader, writer) = tokio::io::split(client_end);
        let conn = ClientConnection::connect((), reader, writer, ClientOptions::default());
        let measured = run(&conn, spec).await?;
        conn.close().await.map_err(err)?;
        served.await.map_err(err)?.map_err(err)?;
        metrics(&spec, &measured)
    })
}
