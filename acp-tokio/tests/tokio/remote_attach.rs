//! Sessions shared by several clients (features `ws` and `unstable_session_attach`; issue 32
//! §3), on a real server over real WebSockets: a client of another connection attaches to a
//! live session as an observer or a controller; observers see every update and cannot act;
//! a controller's answer to a permission ask wins when it comes first (the host's copy is
//! cancelled, everyone learns who answered); a controller prompts in the session; a caller with
//! another credential cannot attach; a guest that detached gets nothing more; a host gone
//! leaves "session not found".

use std::time::Duration;

use acp_tokio::remote::WsServerOptions;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::common::raw_http::server;

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn open(addr: &str, token: &str) -> Ws {
    let mut request = format!("ws://{addr}/acp").into_client_request().expect("a request");
    request.headers_mut().insert("authorization", format!("Bearer {token}").parse().expect("a header"));
    let (ws, _) = tokio_tungstenite::connect_async(request).await.expect("the upgrade");
    ws
}

async fn send(ws: &mut Ws, message: Value) {
    ws.send(Message::Text(message.to_string().into())).await.expect("send");
}

async fn next(ws: &mut Ws) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(20), ws.next()).await.expect("a message in time");
        match message {
            Some(Ok(Message::Text(text))) => return serde_json::from_str(text.as_str()).expect("json"),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

/// The messages up to the first that `done` accepts (included).
async fn until(ws: &mut Ws, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let message = next(ws).await;
        let last = done(&message);
        seen.push(message);
        if last {
            return seen;
        }
    }
}

/// Nothing arrives for a while.
async fn quiet(ws: &mut Ws) {
    if let Ok(Some(message)) = tokio::time::timeout(Duration::from_millis(300), ws.next()).await {
        panic!("nothing expected, got {message:?}");
    }
}

async fn initialized(addr: &str, token: &str) -> (Ws, Value) {
    let mut ws = open(addr, token).await;
    send(&mut ws, json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})).await;
    let init = next(&mut ws).await;
    (ws, init)
}

fn attach(id: u64, session: &str, role: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/attach", "params": {"sessionId": session, "role": role}})
}

fn prompt(id: u64, session: &str, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
}

fn is_answer(id: u64) -> impl Fn(&Value) -> bool {
    move |m| m["id"] == id && m.get("method").is_none()
}

fn text_of(message: &Value) -> Option<&str> {
    message["params"]["update"]["content"]["text"].as_str()
}

fn sharing() -> WsServerOptions {
    WsServerOptions { share_sessions: true, bearer_tokens: vec!["alpha".into(), "beta".into()], ..Default::default() }
}

#[tokio::test]
async fn observers_watch_controllers_act_and_the_first_answer_to_an_ask_wins() {
    let server = server(sharing()).await;
    let (mut host, init) = initialized(&server.addr, "alpha").await;
    let attach_capability = &init["result"]["agentCapabilities"]["sessionCapabilities"]["attach"];
    assert_eq!(attach_capability["roles"], json!(["controller", "observer"]), "advertised: {init}");
    send(
        &mut host,
        json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/", "mcpServers": []}}),
    )
    .await;
    let session = next(&mut host).await["result"]["sessionId"].as_str().expect("a session").to_owned();

    // Another credential, or a session nobody holds: "session not found", alike.
    let (mut stranger, _) = initialized(&server.addr, "beta").await;
    send(&mut stranger, attach(1, &session, "observer")).await;
    assert_eq!(next(&mut stranger).await["error"]["code"], -32001);
    let (mut observer, _) = initialized(&server.addr, "alpha").await;
    send(&mut observer, attach(1, "no-such-session", "observer")).await;
    assert_eq!(next(&mut observer).await["error"]["code"], -32001);

    send(&mut observer, attach(2, &session, "observer")).await;
    let answer = next(&mut observer).await;
    assert_eq!(answer["result"]["role"], "observer", "{answer}");
    assert_eq!(answer["result"]["connectedClients"][0]["clientId"], "host");
    let (mut controller, _) = initialized(&server.addr, "alpha").await;
    send(&mut controller, attach(1, &session, "controller")).await;
    let answer = next(&mut controller).await;
    assert_eq!(answer["result"]["connectedClients"].as_array().map(Vec::len), Some(3), "{answer}");

    // The host prompts; the agent asks permission: the host and the controller get the ask,
    // the observer does not; the controller answers first.
    send(&mut host, prompt(2, &session, "permission")).await;
    let ask = until(&mut controller, |m| m["method"] == "session/request_permission").await.pop().expect("the ask");
    assert!(ask["id"].as_str().is_some_and(|id| id.starts_with("acp/attach/")), "the hub's id: {ask}");
    send(
        &mut controller,
        json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}}),
    )
    .await;
    let seen = until(&mut host, is_answer(2)).await;
    let host_ask = seen.iter().find(|m| m["method"] == "session/request_permission").expect("the host's ask");
    let cancel = seen.iter().find(|m| m["method"] == "$/cancel_request").expect("the host's copy withdrawn");
    assert_eq!(cancel["params"]["requestId"], host_ask["id"]);
    assert!(seen.iter().any(|m| text_of(m) == Some("permission: allow")), "{seen:?}");
    assert_eq!(seen.last().expect("the answer")["result"]["stopReason"], "end_turn");
    // The host's late answer is dropped (the agent got one).
    send(&mut host, json!({"jsonrpc": "2.0", "id": host_ask["id"], "result": {"outcome": {"outcome": "selected", "optionId": "reject"}}}))
        .await;

    let watched = until(&mut observer, |m| text_of(m) == Some("permission: allow")).await;
    assert!(watched.iter().all(|m| m["method"] != "session/request_permission"), "no ask for an observer: {watched:?}");
    let resolved =
        watched.iter().find(|m| m["params"]["update"]["sessionUpdate"] == "permission_resolved").expect("told");
    assert_eq!(resolved["params"]["update"]["chosenOptionId"], "allow");
    assert!(resolved["params"]["update"]["resolvedBy"].as_str().is_some_and(|by| by.starts_with("guest-")));
    until(&mut controller, |m| text_of(m) == Some("permission: allow")).await;

    // An observer cannot act; a controller prompts, and everyone sees the turn.
    send(&mut observer, prompt(3, &session, "from the observer")).await;
    assert_eq!(next(&mut observer).await["error"]["code"], -32002);
    send(&mut controller, prompt(7, &session, "from the controller")).await;
    let turn = until(&mut controller, is_answer(7)).await;
    assert_eq!(turn.last().expect("the answer")["result"]["stopReason"], "end_turn");
    assert!(turn.iter().any(|m| text_of(m) == Some("from the controller")));
    until(&mut host, |m| text_of(m) == Some("from the controller")).await;
    until(&mut observer, |m| text_of(m) == Some("from the controller")).await;
    quiet(&mut host).await;

    // A controller that detached gets nothing more.
    send(
        &mut controller,
        json!({"jsonrpc": "2.0", "id": 8, "method": "session/detach", "params": {"sessionId": session}}),
    )
    .await;
    assert_eq!(next(&mut controller).await["result"], json!({"sessionId": session, "status": "detached"}));
    send(&mut host, prompt(4, &session, "after the detach")).await;
    until(&mut host, is_answer(4)).await;
    until(&mut observer, |m| text_of(m) == Some("after the detach")).await;
    quiet(&mut controller).await;

    // A guest that just leaves (a close, without session/detach) frees its place: the next one
    // to attach does not see it. (A socket lost without a close is not a leave on a server
    // with resumable streams: its connection waits the grace period for a resume.)
    let (mut quitter, _) = initialized(&server.addr, "alpha").await;
    send(&mut quitter, attach(1, &session, "controller")).await;
    assert_eq!(next(&mut quitter).await["result"]["connectedClients"].as_array().map(Vec::len), Some(3));
    quitter.close(None).await.expect("close");
    let mut listed = Value::Null;
    for _ in 0..50 {
        let (mut late, _) = initialized(&server.addr, "alpha").await;
        send(&mut late, attach(1, &session, "observer")).await;
        listed = next(&mut late).await;
        late.close(None).await.expect("close");
        if listed["result"]["connectedClients"].as_array().map(Vec::len) == Some(3) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let clients = listed["result"]["connectedClients"].as_array().map(Vec::len);
    assert_eq!(clients, Some(3), "host, observer and the latest: the one that left is gone: {listed}");

    // The host goes: the session is no longer found.
    host.close(None).await.expect("close");
    drop(host);
    let mut gone = None;
    for attempt in 0..50 {
        send(&mut observer, prompt(10 + attempt, &session, "anyone?")).await;
        let answer = next(&mut observer).await;
        if answer["error"]["code"] == -32001 {
            gone = Some(answer);
            break;
        }
        assert_eq!(answer["error"]["code"], -32002, "refused as an observer until the host is gone: {answer}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone.is_some(), "the session outlived its host");
}
