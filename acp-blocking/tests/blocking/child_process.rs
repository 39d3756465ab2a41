//! Scenarios against a real child process: the `echo_agent` example, spawned with
//! `ClientConnection::spawn` (stdin/stdout are OS pipes).

use crate::common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use acp_blocking::Error;
use acp_blocking::acp_proto::types::*;
use acp_blocking::acp_proto::{CloseReason, SendError};
use common::*;
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn handshake_then_a_full_prompt_turn_with_updates() {
    within(LIMIT, || {
        let conn = spawn_echo(TestClient::default());
        let session = handshake(&conn, false);
        assert_eq!(session.as_str(), "sess-0");
        let negotiated = conn.negotiated().expect("the handshake committed");
        assert_eq!(negotiated.protocol_version, ProtocolVersion::V1);

        let mut turn = conn.prompt(PromptRequest::new(session.clone(), vec!["one".into(), "two".into()])).unwrap();
        assert_eq!(turn.session_id(), &session);
        let updates: Vec<String> = turn.by_ref().map(|u| text(&u)).collect();
        assert_eq!(updates, ["one", "two"]);
        assert_eq!(turn.finish().unwrap(), StopReason::EndTurn);

        // A second turn on the same session, through the callback form.
        let mut seen = Vec::new();
        let stop = conn.prompt_with(prompt(&session, "storm 5"), |u| seen.push(text(&u))).unwrap();
        assert_eq!(stop, StopReason::EndTurn);
        let expected: Vec<String> = (0..5).map(|i| format!("{i} {}", &seen[0][2..])).collect();
        assert_eq!(seen, expected);

        let status = conn.close().unwrap().expect("a spawned agent has an exit status");
        assert!(status.success(), "the agent exits by itself once its stdin closes: {status:?}");
        assert!(conn.stderr_tail().contains("echo_agent: initialize"), "stderr: {}", conn.stderr_tail());
        assert_eq!(conn.close_reason(), Some(CloseReason::Local));
        assert!(matches!(conn.new_session(NewSessionRequest::new("/", vec![])), Err(Error::ConnectionClosed)));
    });
}

#[test]
fn permission_is_answered_by_the_client_handler() {
    within(LIMIT, || {
        let conn = spawn_echo(TestClient { permission: Some("allow"), ..TestClient::default() });
        let session = handshake(&conn, false);
        let updates: Vec<String> = conn.prompt(prompt(&session, "permission")).unwrap().map(|u| text(&u)).collect();
        assert_eq!(updates, ["permission: allow"]);
    });
}

#[test]
fn fs_read_is_served_by_the_client_and_refused_locally_when_not_advertised() {
    within(LIMIT, || {
        let mut client = TestClient::default();
        client.files.insert("/project/notes.txt".into(), "line one\nline two".into());
        let conn = spawn_echo(client);
        let session = handshake(&conn, true);
        let updates: Vec<String> =
            conn.prompt(prompt(&session, "read /project/notes.txt")).unwrap().map(|u| text(&u)).collect();
        assert_eq!(updates, ["line one\nline two"]);
        let missing: Vec<String> = conn.prompt(prompt(&session, "read /nope")).unwrap().map(|u| text(&u)).collect();
        assert!(missing[0].contains("-32002"), "{missing:?}");

        // `terminal` was not advertised: the agent's core refuses the request, nothing is sent.
        let refused: Vec<String> = conn.prompt(prompt(&session, "terminal ls")).unwrap().map(|u| text(&u)).collect();
        assert!(refused[0].starts_with("error: refused locally"), "{refused:?}");
        assert!(refused[0].contains("terminal"), "{refused:?}");
    });
}

#[test]
fn cancel_mid_turn_ends_the_turn_cancelled_and_cancels_pending_permission_asks() {
    within(LIMIT, || {
        let client = Arc::new(TestClient::default());
        let conn = spawn_echo(client.clone());
        let session = handshake(&conn, false);

        let started = Instant::now();
        let mut turn = conn.prompt(prompt(&session, "wait")).unwrap();
        assert_eq!(turn.next_update().map(|u| text(&u)).as_deref(), Some("waiting"));
        conn.cancel(&session).unwrap();
        assert_eq!(turn.finish().unwrap(), StopReason::Cancelled);
        // The handler saw the cancellation: the core's own answer would come only after its
        // 5 s turn grace period.
        assert!(started.elapsed() < Duration::from_millis(4500), "took {:?}", started.elapsed());

        // A permission ask pending when the turn is cancelled: the client's core answers it
        // `cancelled` and the handler's signal is set.
        // The turn is read on its own thread, as an application does: a request of the turn
        // is handled once the reader has taken the updates before it.
        let turn = conn.prompt(prompt(&session, "permission")).unwrap();
        let reader = thread::spawn(move || {
            let mut turn = turn;
            let updates: Vec<String> = turn.by_ref().map(|u| text(&u)).collect();
            (updates, turn.finish())
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while client.calls().is_empty() {
            assert!(Instant::now() < deadline, "the permission ask never arrived");
            thread::sleep(Duration::from_millis(5));
        }
        conn.cancel(&session).unwrap();
        let (updates, stop) = reader.join().unwrap();
        assert_eq!(updates, ["permission: cancelled"]);
        assert_eq!(stop.unwrap(), StopReason::Cancelled);
        let deadline = Instant::now() + Duration::from_secs(10);
        while client.cancelled_asks.load(Ordering::SeqCst) == 0 {
            assert!(Instant::now() < deadline, "the client handler never saw its cancellation");
            thread::sleep(Duration::from_millis(5));
        }
    });
}

#[test]
fn a_request_to_an_unresponsive_handler_times_out_and_the_connection_lives_on() {
    within(LIMIT, || {
        let conn = spawn_echo(TestClient::default());
        handshake(&conn, false);
        let started = Instant::now();
        let slow = conn.with_timeout(Duration::from_millis(200)).ext_method("_sleep", json!({"ms": 3000}));
        assert!(matches!(slow, Err(Error::TimedOut)), "{slow:?}");
        assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
        assert_eq!(conn.ext_method("_echo", json!({"x": 1})).unwrap(), json!({"x": 1}));
    });
}

#[test]
fn a_panicking_agent_handler_answers_internal_error_and_the_connection_lives_on() {
    within(LIMIT, || {
        let conn = spawn_echo(TestClient::default());
        let session = handshake(&conn, false);
        let panicked = conn.prompt(prompt(&session, "panic")).unwrap().finish();
        match panicked {
            Err(e @ Error::Rpc(_)) => assert_eq!(e.rpc_code(), Some(-32603)),
            other => panic!("expected -32603, got {other:?}"),
        }
        let again: Vec<String> = conn.prompt(prompt(&session, "still here")).unwrap().map(|u| text(&u)).collect();
        assert_eq!(again, ["still here"]);
        assert!(conn.stderr_tail().contains("echo_agent was asked to panic"), "{}", conn.stderr_tail());
    });
}

#[cfg(unix)]
#[test]
fn killing_the_agent_mid_turn_fails_every_pending_call_with_connection_closed() {
    use rustix::process::{Pid, Signal, kill_process};
    within(LIMIT, || {
        let conn = Arc::new(spawn_echo(TestClient::default()));
        let session = handshake(&conn, false);
        let mut turn = conn.prompt(prompt(&session, "wait")).unwrap();
        assert_eq!(turn.next_update().map(|u| text(&u)).as_deref(), Some("waiting"));
        let sleeper = {
            let conn = conn.clone();
            thread::spawn(move || conn.ext_method("_sleep", json!({"ms": 20_000})))
        };
        thread::sleep(Duration::from_millis(100)); // let the ext request go out

        let pid = Pid::from_raw(conn.child_id().unwrap() as i32).unwrap();
        kill_process(pid, Signal::KILL).unwrap();

        assert!(matches!(turn.finish(), Err(Error::ConnectionClosed)));
        assert!(matches!(sleeper.join().unwrap(), Err(Error::ConnectionClosed)));
        assert!(matches!(conn.prompt(prompt(&session, "again")), Err(Error::ConnectionClosed)));
        assert_eq!(conn.close_reason(), Some(CloseReason::PeerEof));
        let status = conn.close().unwrap().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "{status:?}");
    });
}

#[test]
fn twenty_concurrent_sessions_each_get_their_own_updates_in_order() {
    within(LIMIT, || {
        let conn = spawn_echo(TestClient::default());
        handshake(&conn, false);
        thread::scope(|scope| {
            let workers: Vec<_> = (0..20)
                .map(|_| {
                    scope.spawn(|| {
                        let session = conn.new_session(NewSessionRequest::new("/tmp", vec![])).unwrap().session_id;
                        let mut indices = Vec::new();
                        for _ in 0..3 {
                            let mut turn = conn.prompt(prompt(&session, "storm 40")).unwrap();
                            for update in &mut turn {
                                indices.push(text(&update).split(' ').next().unwrap().parse::<u32>().unwrap());
                            }
                            assert_eq!(turn.finish().unwrap(), StopReason::EndTurn);
                        }
                        (session, indices)
                    })
                })
                .collect();
            let mut sessions = Vec::new();
            for worker in workers {
                let (session, indices) = worker.join().unwrap();
                let expected: Vec<u32> = (0..3).flat_map(|_| 0..40).collect();
                assert_eq!(indices, expected, "session {session}");
                sessions.push(session);
            }
            sessions.sort();
            sessions.dedup();
            assert_eq!(sessions.len(), 20);
        });
    });
}

#[test]
fn a_turn_already_running_is_refused_locally() {
    within(LIMIT, || {
        let conn = spawn_echo(TestClient::default());
        let session = handshake(&conn, false);
        let turn = conn.prompt(prompt(&session, "wait")).unwrap();
        let second = conn.prompt(prompt(&session, "hello"));
        assert!(matches!(second, Err(Error::Send(SendError::TurnAlreadyRunning(_)))), "{second:?}");
        turn.cancel().unwrap();
        assert_eq!(turn.finish().unwrap(), StopReason::Cancelled);
    });
}

#[test]
fn terminal_requests_are_served_by_the_client_when_advertised() {
    within(LIMIT, || {
        let client = Arc::new(TestClient::default());
        let conn = spawn_echo(client.clone());
        let mut init = InitializeRequest::new(ProtocolVersion::V1);
        init.client_capabilities.terminal = true;
        conn.initialize(init).unwrap();
        let session = conn.new_session(NewSessionRequest::new("/tmp", vec![])).unwrap().session_id;
        let updates: Vec<String> =
            conn.prompt(prompt(&session, "terminal make test")).unwrap().map(|u| text(&u)).collect();
        assert_eq!(updates, ["output of term-1"]);
        assert_eq!(
            client.calls(),
            ["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"]
        );
    });
}

#[test]
fn the_agent_exits_within_a_second_of_stdin_eof_even_mid_turn() {
    within(LIMIT, || {
        let conn = spawn_echo(TestClient::default());
        let session = handshake(&conn, false);
        let mut turn = conn.prompt(prompt(&session, "wait")).unwrap();
        assert_eq!(turn.next_update().map(|u| text(&u)).as_deref(), Some("waiting"));
        // `close` closes the agent's stdin, then gives it `close_grace` (1 s) before SIGTERM:
        // a clean exit status means the agent left by itself, its prompt handler still blocked.
        let started = Instant::now();
        let status = conn.close().unwrap().unwrap();
        assert!(status.success(), "{status:?}");
        assert!(started.elapsed() < Duration::from_secs(1), "took {:?}", started.elapsed());
        assert!(matches!(turn.finish(), Err(Error::ConnectionClosed)));
        assert!(conn.stderr_tail().contains("stdin closed, exiting"), "{}", conn.stderr_tail());
    });
}

#[test]
fn a_dropped_turn_is_cancelled_so_its_session_takes_a_new_one() {
    within(LIMIT, || {
        let conn = spawn_echo(TestClient::default());
        let session = handshake(&conn, false);
        let mut turn = conn.prompt(prompt(&session, "wait")).unwrap();
        assert_eq!(turn.next_update().map(|u| text(&u)).as_deref(), Some("waiting"));
        // The agent's handler waits up to 60 s for its cancellation; until the turn ends the
        // core refuses another prompt of the session. Dropping the turn sends `session/cancel`.
        drop(turn);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut next = loop {
            match conn.prompt(prompt(&session, "after")) {
                Ok(turn) => break turn,
                Err(Error::Send(SendError::TurnAlreadyRunning(_))) if Instant::now() < deadline => {
                    thread::sleep(Duration::from_millis(10));
                }
                Err(e) => panic!("the dropped turn was not cancelled: {e}"),
            }
        };
        assert_eq!(next.next_update().map(|u| text(&u)).as_deref(), Some("after"));
        assert_eq!(next.finish().unwrap(), StopReason::EndTurn);
        conn.close().unwrap();
    });
}
