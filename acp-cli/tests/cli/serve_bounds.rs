//! `acp serve` under peers that hold what they can (issue 28, items 1 to 3), spoken by hand
//! over HTTP/1.1 as such peers would: session streams nobody opens cannot grow the server past
//! its byte budgets, a flood of silent sockets neither exhausts its file descriptors nor keeps
//! a client or the health check out, and a token file's tokens are credentials of their own.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use rustix::process::{Pid, Resource, Rlimit, getrlimit, prlimit, setrlimit};

/// `acp serve --listen 127.0.0.1:0 EXTRA -- acp agent --quiet`.
fn serve(extra: &[&str], dir: &TempDir) -> Serving {
    let acp = acp();
    let acp = acp.to_str().unwrap();
    let mut args = vec!["serve", "--listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", acp, "agent", "--quiet"]);
    start_serving(&args, dir.path())
}

/// One request (`Connection: close`): the status and the response's raw text.
fn request(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    try_request(addr, method, headers, body).expect("connect and send")
}

/// [`request`]; `None` when nothing listens at `addr` (any more), or it hung up before the
/// request was sent.
fn try_request(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut text = format!("{method} /acp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    text.push_str(&format!("Content-Length: {}\r\n", body.len()));
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    stream.write_all(text.as_bytes()).ok()?;
    stream.write_all(body.as_bytes()).ok()?;
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    Some((status, answer))
}

/// The `Acp-Connection-Id` of an answer to `initialize`.
fn connection_id(answer: &str) -> String {
    let header =
        answer.lines().filter_map(|l| l.split_once(':')).find(|(n, _)| n.eq_ignore_ascii_case("acp-connection-id"));
    header.map(|(_, value)| value.trim().to_owned()).expect("Acp-Connection-Id")
}

/// The `data:` messages of the connection's SSE stream, as they come (a thread reads it).
fn connection_stream(addr: &str, conn: &str) -> mpsc::Receiver<serde_json::Value> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let head =
        format!("GET /acp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nAcp-Connection-Id: {conn}\r\n\r\n");
    stream.write_all(head.as_bytes()).expect("send the head");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { return };
            if let Some(data) = line.strip_prefix("data: ")
                && tx.send(serde_json::from_str(data).expect("JSON data")).is_err()
            {
                return;
            }
        }
    });
    rx
}

#[test]
fn forty_prompts_of_4_mib_on_sessions_nobody_reads_keep_acp_serve_within_its_byte_budget() {
    const SESSIONS: usize = 40;
    const TEXT: usize = 4 << 20;
    let dir = TempDir::new("serve-bytes");
    let served = serve(&[], &dir);
    let addr = served.addr.clone();
    let pid = served.child.id();
    let json = ("Content-Type", "application/json");
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    let (status, answer) = request(&addr, "POST", &[json], init);
    assert_eq!(status, 200, "{answer}");
    let conn = connection_id(&answer);
    let messages = connection_stream(&addr, &conn);
    let mut sessions = Vec::new();
    for id in 1..=SESSIONS {
        let new = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"session/new","params":{{"cwd":"/tmp","mcpServers":[]}}}}"#
        );
        assert_eq!(request(&addr, "POST", &[json, ("Acp-Connection-Id", &conn)], &new).0, 202);
        let created = messages.recv_timeout(Duration::from_secs(30)).expect("session/new's answer");
        sessions.push(created["result"]["sessionId"].as_str().expect("a session id").to_owned());
    }
    let before = rss_kib(pid).expect("the server's RSS");
    // The prompts, each echoed back as a 4 MiB update on its session's stream, which nobody
    // opens. A thread posts them; once the server stops reading the agent, its POSTs wait
    // (the one waiting when the server stops may still be written whole and answered `202`:
    // the thread then finds no server for the next one).
    let (addr2, conn2) = (addr.clone(), conn.clone());
    let posting = std::thread::spawn(move || {
        let text = "e".repeat(TEXT);
        for (id, session) in (100..).zip(&sessions) {
            let prompt = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":"{text}"}}]}}}}"#
            );
            let headers = [json, ("Acp-Connection-Id", conn2.as_str()), ("Acp-Session-Id", session.as_str())];
            if try_request(&addr2, "POST", &headers, &prompt).is_none_or(|(status, _)| status != 202) {
                return;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    let peak = max_rss_while(pid, || posting.is_finished() || Instant::now() >= deadline);
    eprintln!("acp serve: {} MiB before the prompts, at most {} MiB while they came", before / 1024, peak / 1024);
    // Before the byte budget it grew by each echo (40 × 4 MiB = 160 MiB buffered, 368 MiB in
    // all); now by the connection's budget (16 MiB) and what is in transit.
    assert!(peak < before + 96 * 1024, "acp serve grew from {before} KiB to {peak} KiB");
    drop(messages);
    stop_serving(served.child, served.stderr);
    posting.join().expect("the posting thread");
}

/// Raises this process's soft limit on descriptors to hold `wanted` sockets; how many it may.
fn descriptors_for(wanted: usize) -> usize {
    let limit = getrlimit(Resource::Nofile);
    let hard = limit.maximum.unwrap_or(u64::MAX);
    let soft = limit.current.unwrap_or(u64::MAX);
    let need = wanted as u64 + 200;
    if soft < need {
        let _ = setrlimit(Resource::Nofile, Rlimit { current: Some(need.min(hard)), maximum: limit.maximum });
    }
    let soft = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    let can = usize::try_from(soft.saturating_sub(200)).unwrap_or(usize::MAX).min(wanted);
    if can < wanted {
        eprintln!("only {can} sockets: this process may open {soft} descriptors");
    }
    can
}

#[test]
fn five_hundred_silent_sockets_keep_neither_a_client_nor_the_health_check_out() {
    let silent_count = descriptors_for(500);
    let dir = TempDir::new("serve-silent");
    let token = dir.file("token", "correct-horse\n");
    let served = serve(&["--token-file", &token], &dir);
    let addr = served.addr.clone();
    // The server may hold 400 descriptors: 500 sockets held would exhaust them.
    let pid = Pid::from_child(&served.child);
    prlimit(Some(pid), Resource::Nofile, Rlimit { current: Some(400), maximum: Some(400) }).expect("prlimit");
    let mut silent = Vec::new();
    for i in 0..silent_count {
        let mut socket = TcpStream::connect(&addr).expect("connect");
        // A third drip a header line and stop; the rest say nothing.
        if i % 3 == 0 {
            let _ = socket.write_all(b"POST /acp HTTP/1.1\r\nHost: x\r\n");
        }
        silent.push(socket);
    }
    let url = format!("http://{addr}/acp");
    let run = run(&["client", "--deny", "--connect", &url, "--token-file", &token, "-p", "hi"], dir.path(), "");
    assert_eq!(run.code(), 0, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("end of turn"), "{}", run.stdout);
    let mut health = TcpStream::connect(&addr).expect("connect");
    health.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    health.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = health.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "the health check: {answer:?}");
    // The server closed all but the newest 128 (its cap on unauthenticated connections).
    let mut open = 0;
    for mut socket in silent {
        socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let mut byte = [0u8; 1];
        match socket.read(&mut byte) {
            Ok(0) => {}
            Ok(_) => panic!("a silent socket got an answer"),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => open += 1,
            Err(_) => {}
        }
    }
    assert!(open <= 128, "{open} unauthenticated connections held");
    stop_serving(served.child, served.stderr);
}

#[test]
fn a_token_file_holds_a_token_per_user_and_the_header_deadline_is_a_flag() {
    let dir = TempDir::new("serve-tokens");
    let tokens = dir.file("tokens", "alice-token\n\nbob-token\n");
    let bob = dir.file("bob", "bob-token\n");
    let served = serve(&["--token-file", &tokens, "--header-timeout", "1"], &dir);
    let addr = served.addr.clone();
    // Each line is a token: bob's (the second) runs a turn.
    let url = format!("http://{addr}/acp");
    let run = run(&["client", "--deny", "--connect", &url, "--token-file", &bob, "-p", "hi"], dir.path(), "");
    assert_eq!(run.code(), 0, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    // Each its own credential: alice's connection is unknown to bob.
    let json = ("Content-Type", "application/json");
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}"#;
    let (status, answer) = request(&addr, "POST", &[json, ("Authorization", "Bearer alice-token")], init);
    assert_eq!(status, 200, "{answer}");
    let conn = connection_id(&answer);
    let note = r#"{"jsonrpc":"2.0","method":"_x/note","params":{}}"#;
    let as_bob = [json, ("Authorization", "Bearer bob-token"), ("Acp-Connection-Id", conn.as_str())];
    assert_eq!(request(&addr, "POST", &as_bob, note).0, 404);
    let as_alice = [json, ("Authorization", "Bearer alice-token"), ("Acp-Connection-Id", conn.as_str())];
    assert_eq!(request(&addr, "POST", &as_alice, note).0, 202);
    // --header-timeout 1: a silent socket is closed long before the default 10 s.
    let mut silent = TcpStream::connect(&addr).expect("connect");
    silent.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    let mut byte = [0u8; 1];
    assert!(matches!(silent.read(&mut byte), Ok(0)), "the silent socket is still open after 8 s");
    stop_serving(served.child, served.stderr);
}
