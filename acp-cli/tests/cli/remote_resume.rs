//! Resumable streams on a real network (issue 32 §5; feature `unstable_resumable_transport`):
//! `acp serve` in a network namespace the test creates (`common/netns.rs`: skipped with a
//! message where it cannot make one, required in CI). A stream stalled by the link going down
//! (every packet dropped) is given up by its client and resumed with `Last-Event-ID` once the
//! link is back: every message after the cursor, once, in order. A connection cut mid-turn
//! keeps its agent for the grace period, then the server reaps it. `acp client --connect`
//! (`ws://` and `http://`) cut off three times mid-turn (a relay on loopback drops its TCP
//! connections) resumes each time, says so on stderr, and prints what the same turn prints
//! uncut.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

const PORT: u16 = 8765;
const TOKEN: &str = "resume-token";

/// One request on a TCP connection of its own (`Connection: close`): status, headers (names
/// in lower case), body.
fn request(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut text = format!(
        "{method} /acp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    stream.write_all(text.as_bytes()).expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    let raw = String::from_utf8_lossy(&raw);
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head");
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("status");
    let headers =
        lines.filter_map(|l| l.split_once(": ")).map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned())).collect();
    (status, headers, body.to_owned())
}

fn post(
    addr: &str,
    conn: Option<&str>,
    session: Option<&str>,
    message: &Value,
) -> (u16, Vec<(String, String)>, String) {
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend(conn.map(|c| ("Acp-Connection-Id", c)));
    headers.extend(session.map(|s| ("Acp-Session-Id", s)));
    request(addr, "POST", &headers, &message.to_string())
}

/// An SSE stream read by hand (the body is chunked: a chunk's size is a line of its own).
struct Sse {
    lines: std::io::Lines<BufReader<TcpStream>>,
}

impl Sse {
    /// `GET` the connection's stream (or `session`'s), resuming after `last` when given; the
    /// refusal's status and body otherwise.
    fn open(addr: &str, conn: &str, session: Option<&str>, last: Option<u64>) -> Result<Sse, (u16, String)> {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut head = format!(
            "GET /acp HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nAuthorization: Bearer {TOKEN}\r\n\
             Acp-Connection-Id: {conn}\r\n"
        );
        if let Some(session) = session {
            head.push_str(&format!("Acp-Session-Id: {session}\r\n"));
        }
        if let Some(last) = last {
            head.push_str(&format!("Last-Event-ID: {last}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).expect("write");
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).expect("a status line");
        let status: u16 = line.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status");
        let mut length = 0;
        loop {
            line.clear();
            reader.read_line(&mut line).expect("headers");
            if line.trim_end().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().expect("a length");
            }
        }
        if status == 200 {
            return Ok(Sse { lines: reader.lines() });
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).expect("the refusal's body");
        Err((status, String::from_utf8_lossy(&body).into_owned()))
    }

    /// The next message and its cursor (`id:`); events of another type (a resumed stream's
    /// `acp/turnState`, which has no cursor) are skipped.
    fn next_event(&mut self) -> (u64, Value) {
        let (mut id, mut named) = (None, false);
        loop {
            let line = self.lines.next().expect("the stream goes on").expect("a message within 20 s");
            if let Some(kind) = line.strip_prefix("event: ") {
                named = kind != "message";
            }
            if let Some(cursor) = line.strip_prefix("id: ") {
                id = Some(cursor.parse().expect("a cursor this server writes"));
            }
            if let Some(data) = line.strip_prefix("data: ") {
                if std::mem::take(&mut named) {
                    continue;
                }
                return (id.expect("every event has a cursor"), serde_json::from_str(data).expect("JSON data"));
            }
        }
    }
}

fn prompt(id: u64, session: &str, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
}

/// What a message is, in a word: an update's kind (a chunk's text with it), or an answer.
fn describe(message: &Value) -> String {
    let update = &message["params"]["update"];
    match update["sessionUpdate"].as_str() {
        Some("agent_message_chunk") => format!("chunk {}", update["content"]["text"].as_str().unwrap_or("?")),
        Some(kind) => kind.to_owned(),
        None => format!("answer {} {}", message["id"], message["result"]["stopReason"]),
    }
}

/// The events of a turn answered as request `id`, with their cursors, until its answer.
fn until_answer(stream: &mut Sse, id: u64) -> Vec<(u64, String)> {
    let mut events = Vec::new();
    loop {
        let (cursor, message) = stream.next_event();
        events.push((cursor, describe(&message)));
        if message["id"] == id {
            return events;
        }
    }
}

/// Opens a stream again after `last`, while the server still holds the stalled one (`409`,
/// "already open": it has not seen that connection die yet); up to 60 s.
fn resume(addr: &str, conn: &str, session: Option<&str>, last: u64) -> Sse {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(60);
    for attempt in 1.. {
        match Sse::open(addr, conn, session, Some(last)) {
            Ok(stream) => {
                println!("resumed after cursor {last} at attempt {attempt}, {:?} after the first", started.elapsed());
                return stream;
            }
            Err((409, body)) if body.contains("already open") && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(refused) => panic!("the resume after {last} was refused: {refused:?}"),
        }
    }
    unreachable!()
}

#[test]
fn a_stream_stalled_by_a_dead_link_resumes_with_last_event_id_with_nothing_lost_or_twice() {
    let dir = TempDir::new("resume-stall");
    let Some(ns) = NetNs::create("a_stream_stalled_by_a_dead_link_resumes") else { return };
    let token = dir.file("token", &format!("{TOKEN}\n"));
    let acp = acp();
    // A `slow` turn sends its echo, waits 1.5 s, then the rest: the rest is sent while the
    // link is down.
    let (server, stderr) =
        ns.serve(PORT, &token, &["--", acp.to_str().unwrap(), "agent", "--quiet", "--slow-ms", "1500"], dir.path());
    let addr = format!("{}:{PORT}", ns.ns_ip);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}});
    let (status, headers, body) = post(&addr, None, None, &init);
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).expect("JSON");
    assert!(answer["result"]["agentCapabilities"]["_meta"]["acp/transport"]["resumable"].is_object(), "{answer}");
    let conn = headers.iter().find(|(n, _)| n == "acp-connection-id").expect("Acp-Connection-Id").1.clone();
    let mut connection_stream = Sse::open(&addr, &conn, None, None).expect("the connection stream");
    let new = json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp", "mcpServers": []}});
    assert_eq!(post(&addr, Some(&conn), None, &new).0, 202);
    let (connection_cursor, created) = connection_stream.next_event();
    let session = created["result"]["sessionId"].as_str().expect("a session id").to_owned();
    let mut stream = Sse::open(&addr, &conn, Some(&session), None).expect("the session stream");

    // The same turn on a good link first: what the resumed one must add up to.
    assert_eq!(post(&addr, Some(&conn), Some(&session), &prompt(3, &session, "slow commands")).0, 202);
    let whole: Vec<String> = until_answer(&mut stream, 3).into_iter().map(|(_, what)| what).collect();
    assert_eq!(
        whole,
        ["chunk echo: slow commands", "available_commands_update", "chunk done", "answer 3 \"end_turn\""]
    );

    assert_eq!(post(&addr, Some(&conn), Some(&session), &prompt(4, &session, "slow commands")).0, 202);
    let (echo_cursor, echo) = stream.next_event();
    assert_eq!(describe(&echo), "chunk echo: slow commands");
    // The link dies: what the agent sends next is written into a connection that delivers
    // nothing. The client gives its streams up (as one would after missing keepalives).
    ns.link(false);
    std::thread::sleep(Duration::from_secs(3));
    drop(stream);
    drop(connection_stream);
    ns.link(true);
    let mut resumed = resume(&addr, &conn, Some(&session), echo_cursor);
    let rest = until_answer(&mut resumed, 4);
    let whats: Vec<&str> = rest.iter().map(|(_, what)| what.as_str()).collect();
    assert_eq!(
        whats,
        ["available_commands_update", "chunk done", "answer 4 \"end_turn\""],
        "every message after the cursor, once, in order (as on the good link: {whole:?})"
    );
    let cursors: Vec<u64> = rest.iter().map(|(cursor, _)| *cursor).collect();
    let expected: Vec<u64> = (echo_cursor + 1..=echo_cursor + rest.len() as u64).collect();
    assert_eq!(cursors, expected, "the cursors go on from the one resumed after, without a gap");
    // The connection lives on: its own stream resumes too, and the next turn runs.
    let _connection_stream = resume(&addr, &conn, None, connection_cursor);
    assert_eq!(post(&addr, Some(&conn), Some(&session), &prompt(5, &session, "commands")).0, 202);
    let next: Vec<String> = until_answer(&mut resumed, 5).into_iter().map(|(_, what)| what).collect();
    assert_eq!(next, ["chunk echo: commands", "available_commands_update", "chunk done", "answer 5 \"end_turn\""]);
    let log = stop_serving(server, stderr).stderr;
    assert!(log.contains("event=connection_closed"), "{log}");
}

/// The pid the server logged for its connection's agent.
fn agent_pid(log: &str) -> u32 {
    let at = log.find("agent_pid=").expect("the agent's pid is logged") + "agent_pid=".len();
    log[at..].split_whitespace().next().and_then(|p| p.parse().ok()).expect("a pid")
}

/// A process that exists and is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')').map(|(_, rest)| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}

#[test]
fn a_client_that_vanished_mid_turn_leaves_its_agent_for_the_grace_period_then_the_server_reaps_it() {
    let dir = TempDir::new("resume-grace");
    let Some(ns) = NetNs::create("a_client_that_vanished_mid_turn") else { return };
    let token = dir.file("token", &format!("{TOKEN}\n"));
    let acp = acp();
    let marker = unique_marker();
    let _reaper = KillOnDrop(vec![marker.clone()]);
    let args = ["--resume-grace", "3", "--", acp.to_str().unwrap(), "agent", "--quiet", "--slow-ms", &marker];
    let (server, stderr) = ns.serve(PORT, &token, &args, dir.path());
    let url = format!("http://{}:{PORT}/acp", ns.ns_ip);
    let mut client =
        start(&["client", "--deny", "--token-file", &token, "--connect", &url, "-p", "slow"], dir.path(), "", true);
    let stdout = collect(client.stdout.take().unwrap());
    wait_for(&stdout, "echo: slow", Duration::from_secs(20));
    let pid = agent_pid(&stderr.lock().unwrap());
    // The client vanishes (SIGKILL: no DELETE); its kernel resets its TCP connections.
    client.kill().unwrap();
    client.wait().unwrap();
    let gone = Instant::now();
    // Its stream unread for the grace period (3 s), the connection ends as `detached` and the
    // server reaps the agent: nothing else ended it.
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(pid) {
        assert!(Instant::now() < deadline, "agent {pid} outlived the grace period: {}", stderr.lock().unwrap());
        std::thread::sleep(Duration::from_millis(50));
    }
    println!("agent {pid} reaped {:?} after its client vanished (grace 3 s)", gone.elapsed());
    wait_for(&stderr, "event=connection_closed", Duration::from_secs(5));
    let log = stderr.lock().unwrap().clone();
    let ending: Vec<&str> = log.lines().filter(|l| l.contains("event=connection_ending")).collect();
    assert_eq!(ending.len(), 1, "{log}");
    assert!(ending[0].ends_with("reason=detached"), "{log}");
    stop_serving(server, stderr);
}

/// A TCP relay on loopback to `acp serve`: [`Relay::cut`] closes every connection it carries
/// (both ways, no close frame: a network that dropped them).
struct Relay {
    addr: String,
    carried: Arc<Mutex<Vec<TcpStream>>>,
    /// Where new connections go.
    target: Arc<Mutex<String>>,
}

impl Relay {
    fn to(server: &str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let carried = Arc::new(Mutex::new(Vec::new()));
        let target = Arc::new(Mutex::new(server.to_owned()));
        let (server, open) = (target.clone(), carried.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let server = server.lock().unwrap().clone();
                let (Ok(client), Ok(upstream)) = (client, TcpStream::connect(&server)) else { continue };
                let clones = (client.try_clone().expect("clone"), upstream.try_clone().expect("clone"));
                open.lock()
                    .unwrap()
                    .extend([clones.0.try_clone().expect("clone"), clones.1.try_clone().expect("clone")]);
                relay_one_way(clones.0, upstream);
                relay_one_way(clones.1, client);
            }
        });
        Relay { addr, carried, target }
    }

    /// New connections go to `server` from now on.
    fn retarget(&self, server: &str) {
        *self.target.lock().unwrap() = server.to_owned();
    }

    fn cut(&self) {
        for stream in self.carried.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

fn relay_one_way(mut from: TcpStream, mut to: TcpStream) {
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Both);
    });
}

/// `acp serve` of `acp agent --slow-ms 3000` on a port of its own, killed by the guard if the
/// test fails before it stops it (a marker in its `--node-id` names it).
fn serve_slow(dir: &TempDir) -> (Serving, KillOnDrop) {
    serve(dir, &["--slow-ms", "3000"])
}

/// `acp serve` of `acp agent --quiet AGENT_ARGS`, as [`serve_slow`].
fn serve(dir: &TempDir, agent_args: &[&str]) -> (Serving, KillOnDrop) {
    let acp = acp();
    let marker = unique_marker();
    let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--node-id", &marker, "--", acp.to_str().unwrap()];
    args.extend(["agent", "--quiet"]);
    args.extend(agent_args);
    (start_serving(&args, dir.path()), KillOnDrop(vec![marker]))
}

#[test]
fn a_websocket_client_cut_off_three_times_mid_turn_resumes_and_prints_what_an_uncut_one_does() {
    cut_three_times("ws", 1);
}

#[test]
fn a_streamable_http_client_cut_off_three_times_mid_turn_resumes_and_prints_what_an_uncut_one_does() {
    // Two SSE streams (the connection's and the session's), each lost and resumed.
    cut_three_times("http", 2);
}

/// `acp client --connect SCHEME://…` through a relay cut three times during a `slow` turn
/// (each cut once the last one's `streams` were resumed): it says so on stderr and prints
/// what the same turn prints uncut.
fn cut_three_times(scheme: &str, streams: usize) {
    let dir = TempDir::new("resume-client");
    // A `slow` turn sends its echo, waits 3 s, then the rest: the cuts come while it waits.
    let (serving, _reaper) = serve_slow(&dir);
    let relay = Relay::to(&serving.addr);
    let url = format!("{scheme}://{}/acp", relay.addr);
    let client = ["client", "--deny", "--connect", &url, "-p", "slow commands"];
    let uncut = run(&client, dir.path(), "");
    assert_eq!(uncut.code(), 0, "{}", uncut.stderr);

    let mut child = start(&client, dir.path(), "", false);
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    wait_for(&stdout, "echo: slow commands", Duration::from_secs(20));
    let (lost, resumed) = ("acp: connection to ", "acp: connection resumed");
    for cut in 1..=3 {
        relay.cut();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let said = stderr.lock().unwrap().clone();
            let (l, r) = (said.matches(lost).count(), said.matches(resumed).count());
            if l >= cut * streams && r == l {
                break;
            }
            assert!(Instant::now() < deadline, "no resume after cut {cut}:\n{said}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let cut = finish(child, stdout, stderr, Duration::from_secs(30));
    assert_eq!(cut.code(), 0, "{}", cut.stderr);
    // Each run is a connection of its own: its id is all that differs.
    let (cut_out, uncut_out) = (without_connection_id(&cut.stdout), without_connection_id(&uncut.stdout));
    assert!(cut_out.contains("echo: slow commands\ncommands available: /status\ndone\n"), "{cut_out}");
    assert_eq!(cut_out, uncut_out, "the cut turn prints as the uncut one");
    assert_eq!(cut.stderr.matches(lost).count(), 3 * streams, "{}", cut.stderr);
    assert_eq!(cut.stderr.matches(resumed).count(), 3 * streams, "{}", cut.stderr);
    assert!(cut.stderr.contains("; turns: sess-1 running (prompt "), "the turn still ran: {}", cut.stderr);
    stop_serving(serving.child, serving.stderr);
}

#[test]
fn a_client_whose_server_is_gone_says_it_could_not_resume_and_exits_as_its_agent_died() {
    let dir = TempDir::new("resume-gone");
    let (mut serving, _reaper) = serve_slow(&dir);
    let relay = Relay::to(&serving.addr);
    let url = format!("ws://{}/acp", relay.addr);
    let mut child = start(&["client", "--deny", "--connect", &url, "-p", "slow"], dir.path(), "", false);
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    wait_for(&stdout, "echo: slow", Duration::from_secs(20));
    // The server dies mid-turn (its agent with it): every try to resume finds no one.
    serving.child.kill().expect("kill acp serve");
    let _ = serving.child.wait();
    relay.cut();
    let gone = finish(child, stdout, stderr, Duration::from_secs(60));
    assert_eq!(gone.code(), 7, "{}", gone.stderr);
    assert!(gone.stderr.contains("acp: connection to ws://"), "{}", gone.stderr);
    assert!(gone.stderr.contains("acp: could not resume the connection: 8 tries to resume failed"), "{}", gone.stderr);
}

#[test]
fn a_repl_whose_server_died_reloads_its_session_with_session_load_from_the_next_one() {
    reload_from_the_next_server(&["--no-resume"], "session/load");
}

#[test]
fn a_repl_whose_server_died_reloads_its_session_with_session_resume_from_the_next_one() {
    reload_from_the_next_server(&[], "session/resume");
}

/// Two `acp serve` sharing an agent's `--history` (as behind a load balancer): the REPL's
/// server dies between two turns, its resume is refused by the next server (`404`), and the
/// client connects again and reopens its session with `method` there; the history is not
/// drawn twice, and the next prompt runs in the same session.
fn reload_from_the_next_server(agent_args: &[&str], method: &str) {
    let dir = TempDir::new("resume-reload");
    let history = dir.path().join("history");
    std::fs::create_dir(&history).unwrap();
    let mut agent = vec!["--history", history.to_str().unwrap()];
    agent.extend(agent_args);
    let (mut first, _first_reaper) = serve(&dir, &agent);
    let relay = Relay::to(&first.addr);
    let url = format!("ws://{}/acp", relay.addr);
    let mut client = start_interactive(&["client", "--deny", "--connect", &url], dir.path());
    let mut input = client.stdin.take().unwrap();
    let stdout = collect(client.stdout.take().unwrap());
    let stderr = collect(client.stderr.take().unwrap());
    feed(&mut input, b"first words\n");
    wait_for(&stdout, "echo: first words", Duration::from_secs(20));
    wait_for(&stdout, "end of turn", Duration::from_secs(20));

    first.child.kill().expect("kill the first acp serve");
    let _ = first.child.wait();
    let (second, _second_reaper) = serve(&dir, &agent);
    relay.retarget(&second.addr);
    relay.cut();
    wait_for(&stdout, "reloaded session", Duration::from_secs(30));
    feed(&mut input, b"second words\n");
    wait_for(&stdout, "echo: second words", Duration::from_secs(20));
    drop(input);
    let run = finish(client, stdout, stderr, Duration::from_secs(30));
    assert_eq!(run.code(), 0, "{}", run.stderr);
    assert!(run.stderr.contains("acp: could not resume the connection"), "{}", run.stderr);
    assert!(run.stdout.contains("the agent died while idle"), "{}", run.stdout);
    assert!(run.stdout.contains(&format!("from the agent with {method} over a new connection")), "{}", run.stdout);
    assert_eq!(run.stdout.matches("echo: first words").count(), 1, "the history is not drawn again:\n{}", run.stdout);
    assert!(!run.stdout.contains("you: first words"), "the history is not drawn again:\n{}", run.stdout);
    // The second turn ran in the reloaded session, on the second server.
    let session = run.stdout.lines().find_map(|l| l.strip_prefix("session ")).expect("the session line");
    let session = session.split(' ').next().expect("an id");
    assert!(run.stdout.contains(&format!("reloaded session {session} ")), "{}", run.stdout);
    stop_serving(second.child, second.stderr);
}

#[test]
fn behind_nginx_a_repl_whose_instance_died_reloads_its_session_on_the_other_one() {
    use crate::load_balancer::{Instance, nginx, start_nginx};
    let Some(nginx) = nginx() else { return };
    let dir = TempDir::new("resume-failover");
    let history = dir.path().join("history");
    std::fs::create_dir(&history).unwrap();
    let agent = ["--history", history.to_str().unwrap(), "--no-resume"];
    let mut instances = [Instance::with_agent("a", dir.path(), &agent), Instance::with_agent("b", dir.path(), &agent)];
    let proxy = start_nginx(&nginx, &dir, &instances[0], &instances[1]);
    let url = format!("ws://127.0.0.1:{}/acp", proxy.port);
    let mut client = start_interactive(&["client", "--deny", "--connect", &url], dir.path());
    let mut input = client.stdin.take().unwrap();
    let stdout = collect(client.stdout.take().unwrap());
    let stderr = collect(client.stderr.take().unwrap());
    feed(&mut input, b"first words\n");
    wait_for(&stdout, "end of turn", Duration::from_secs(20));
    // The instance holding the connection (its id starts with its node id) dies.
    let holder = if stdout.lock().unwrap().contains("(connection a-") { 0 } else { 1 };
    instances[holder].child.kill().expect("kill the instance");
    let _ = instances[holder].child.wait();
    wait_for(&stdout, "reloaded session", Duration::from_secs(60));
    feed(&mut input, b"second words\n");
    wait_for(&stdout, "echo: second words", Duration::from_secs(20));
    drop(input);
    let run = finish(client, stdout, stderr, Duration::from_secs(30));
    assert_eq!(run.code(), 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("with session/load over a new connection"), "{}", run.stdout);
    assert_eq!(run.stdout.matches("echo: first words").count(), 1, "the history is drawn once:\n{}", run.stdout);
    let other = &instances[1 - holder];
    assert_eq!(other.log.lock().unwrap().matches("event=connection_opened").count(), 1, "the other instance took over");
}

/// `--connect`'s first line without the connection's id.
fn without_connection_id(stdout: &str) -> String {
    let (first, rest) = stdout.split_once('\n').expect("a first line");
    let first = first.split(" (connection ").next().expect("the first line");
    format!("{first}\n{rest}")
}
