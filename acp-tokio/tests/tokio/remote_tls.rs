//! Remote ACP over TLS on loopback (features `tls`, `ws`), with certificates made at test time:
//! the scenario suite over `wss://`, the ALPN protocols the server offers (`h2` for Streamable
//! HTTP, `http/1.1`), and a client that does not trust the server's CA.

use crate::common;

use std::time::Duration;

use acp_tokio::remote::{TlsClient, WsClientOptions, connect_ws};
use common::certs::{certificates, start};
use common::{TestClient, scenarios};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::test]
async fn the_scenario_suite_runs_over_wss_and_the_server_offers_h2_and_http1() {
    let dir = std::env::temp_dir().join(format!("acp-tokio-tls-{}", std::process::id()));
    let (ca, tls) = certificates(&dir);
    let (port, stop, task) = start(tls).await;
    let trust = TlsClient::trusting(Some(&ca)).expect("the CA");

    // ALPN: what a Streamable HTTP client (h2) and a WebSocket client (http/1.1) get.
    for (offered, chosen) in [(&[&b"h2"[..], b"http/1.1"][..], &b"h2"[..]), (&[&b"http/1.1"[..]][..], b"http/1.1")] {
        let tcp = TcpStream::connect(("127.0.0.1", port)).await.expect("tcp");
        let stream = trust.with_alpn(offered).connect("localhost", tcp).await.expect("handshake");
        assert_eq!(stream.get_ref().1.alpn_protocol(), Some(chosen));
    }
    // The health check over HTTP/1.1 in TLS.
    let tcp = TcpStream::connect(("127.0.0.1", port)).await.expect("tcp");
    let mut stream = trust.with_alpn(&[b"http/1.1"]).connect("127.0.0.1", tcp).await.expect("handshake");
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await.expect("write");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    let (client, mut events) = TestClient::with_events();
    let client = TestClient { permission: Some("allow"), ..client };
    let options = WsClientOptions { tls: Some(trust), ..WsClientOptions::default() };
    let url = format!("wss://localhost:{port}/acp");
    let (conn, _) = connect_ws(client, &url, options).await.expect("wss connect");
    let session = scenarios::handshake_and_sessions(&conn).await;
    scenarios::prompt_stream(&conn, &session).await;
    scenarios::permission_granted(&conn, &session, &mut events).await;
    scenarios::cancel_mid_turn(&conn, &session, None).await;
    conn.close().await.expect("close");
    drop(stop);
    let ended = tokio::time::timeout(Duration::from_secs(20), task).await.expect("the server stops");
    ended.expect("join").expect("served");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn a_server_whose_ca_is_not_trusted_is_refused_with_invalid_data() {
    let dir = std::env::temp_dir().join(format!("acp-tokio-tls-untrusted-{}", std::process::id()));
    let (_, tls) = certificates(&dir.join("server"));
    let (other_ca, _) = certificates(&dir.join("other"));
    let (port, _stop, _task) = start(tls).await;
    let options =
        WsClientOptions { tls: Some(TlsClient::trusting(Some(&other_ca)).expect("ca")), ..Default::default() };
    let refused = connect_ws(TestClient::default(), &format!("wss://localhost:{port}/acp"), options).await;
    let Err(acp_tokio::Error::Io(e)) = refused.map(drop) else { panic!("not refused as an I/O error") };
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
    assert!(e.to_string().contains("certificate is not trusted"), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}
