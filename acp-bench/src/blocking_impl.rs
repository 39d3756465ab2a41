//! Agent and client on `acp-blocking` (plain threads).
//!
//! W3's 64 workers are 64 threads sharing one connection, as a synchronous application would
//! run them.

use std::time::Instant;

use acp_blocking::{Agent, ClientConnection, ClientOptions, PromptContext, RequestContext};
use acp_proto::RpcError;
use acp_proto::types::*;

use crate::metrics::{Metric, peak_rss_kb};
use crate::spec::{Measured, Spec, Workload, check_prompt, metrics};
use crate::wire::{BenchAgent, chunk_update, expected_stop, is_chunk};

/// The workloads' agent on this adapter.
impl Agent for BenchAgent {
    fn initialize(&self, _: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }

    fn new_session(&self, _: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new(self.next_session()))
    }

    fn prompt(&self, _: PromptRequest, cx: &PromptContext) -> Result<PromptResponse, RpcError> {
        for _ in 0..self.updates() {
            cx.send_update(chunk_update())?;
        }
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

/// `acp-bench agent --adapter blocking`: serves stdin/stdout until stdin ends.
pub fn serve_stdio(updates: u64) -> Result<(), String> {
    acp_blocking::serve_stdio(BenchAgent::new(updates)).map_err(|e| e.to_string())
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn run_prompt(conn: &ClientConnection, session: &SessionId) -> Result<u64, String> {
    let request = PromptRequest::new(session.clone(), vec![ContentBlock::text("bench")]);
    let mut turn = conn.prompt(request).map_err(err)?;
    let mut counted = 0;
    for update in &mut turn {
        counted += u64::from(is_chunk(&update));
    }
    let stop = turn.finish().map_err(err)?;
    if stop != expected_stop() {
        return Err(format!("stop reason {stop:?}"));
    }
    Ok(counted)
}

/// Handshake and sessions (untimed), then the workload.
pub fn run(conn: &ClientConnection, spec: Spec) -> Result<Measured, String> {
    conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).map_err(err)?;
    let mut sessions = Vec::new();
    for _ in 0..spec.sessions {
        sessions.push(conn.new_session(NewSessionRequest::new("/tmp", vec![])).map_err(err)?.session_id);
    }
    let mut measured = Measured::default();
    match spec.workload {
        Workload::W1 | Workload::W2 => {
            let mut counted = 0;
            let t0 = Instant::now();
            for k in 1..=spec.prompts {
                let start = Instant::now();
                counted += run_prompt(conn, &sessions[0])?;
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
            let results: Vec<Result<u64, String>> = std::thread::scope(|scope| {
                let workers: Vec<_> = sessions
                    .iter()
                    .enumerate()
                    .map(|(i, session)| {
                        scope.spawn(move || {
                            let mut counted = 0;
                            for k in 1..=spec.prompts {
                                counted += run_prompt(conn, session)?;
                                check_prompt(&spec, i, k, counted)?;
                            }
                            Ok(counted)
                        })
                    })
                    .collect();
                workers.into_iter().map(|w| w.join().unwrap_or_else(|_| Err("a worker panicked".into()))).collect()
            });
            measured.elapsed = t0.elapsed();
            for r in results {
                measured.updates += r?;
            }
        }
    }
    Ok(measured)
}

/// `blocking-stdio`: spawns `argv --updates N` and runs the workload against it.
pub fn client_stdio(spec: Spec, argv: &[String]) -> Result<Vec<Metric>, String> {
    let command = crate::cli::agent_command(argv, spec.updates)?;
    let conn = ClientConnection::spawn((), command, ClientOptions::default()).map_err(err)?;
    let measured = run(&conn, spec);
    let agent_rss = conn.child_id().and_then(|pid| peak_rss_kb(&pid.to_string()));
    let stderr = conn.stderr_tail();
    conn.close().map_err(err)?;
    let mut metrics = metrics(&spec, &measured.map_err(|e| format!("{e}; agent stderr: {stderr}"))?)?;
    if let Some(kb) = agent_rss {
        metrics.push(Metric::int("agent_peak_rss_kb", kb, "kB"));
    }
    Ok(metrics)
}
