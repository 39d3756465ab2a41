//! Remote ACP over TLS on loopback (feature `tls`), with certificates made at test time: the
//! scenario suite over `wss://`, the ALPN protocols the server offers (`h2` for Streamable
//! HTTP, `http/1.1`), and a client that does not trust the server's CA.

mod common;

use std::time::Duration;

use acp_tokio::AgentOptions;
use acp_tokio::remote::{AgentBackend, TlsClient, TlsServer, WsClientOptions, WsServerOptions, connect_ws, serve_ws};
use common::{EchoAgent, TestClient, scenarios};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// A private CA's certificate (PEM) and a server configuration with a certificate it signed
/// for `localhost` and `127.0.0.1`.
fn certificates(dir: &std::path::Path) -> (std::path::PathBuf, TlsServer) {
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "acp-tokio test CA");
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().expect("ca key")).expect("ca");
    let params = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).expect("params");
    let key = KeyPair::generate().expect("key");
    let cert = params.signed_by(&key, &ca).expect("signed");
    std::fs::create_dir_all(dir).expect("dir");
    let (ca_path, cert_path, key_path) = (dir.join("ca.pem"), dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&ca_path, ca.pem()).expect("write");
    std::fs::write(&cert_path, cert.pem()).expect("write");
    std::fs::write(&key_path, key.serialize_pem()).expect("write");
    (ca_path, TlsServer::from_pem_files(&cert_path, &key_path).expect("a server config"))
}

/// A TLS server of echo agents; stops when the returned sender is dropped.
async fn start(tls: TlsServer) -> (u16, oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (stop, stopped) = oneshot::channel::<()>();
    let backend = AgentBackend::new(EchoAgent::default, AgentOptions::default());
    let options = WsServerOptions { tls: Some(tls), ..WsServerOptions::default() };
    let task = tokio::spawn(serve_ws(listener, backend, options, async move {
        let _ = stopped.await;
    }));
    (port, stop, task)
}

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
