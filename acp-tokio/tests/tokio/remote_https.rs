//! Our Streamable HTTP client over `https://` (features `http` and `tls`) against our own TLS
//! server on loopback, with a private CA made at test time: ALPN picks `h2`, the scenario
//! suite runs over it, and a server whose CA is not trusted is refused at open.

use crate::common;

use std::time::Duration;

use acp_tokio::remote::{HttpClientOptions, TlsClient, TlsServer, connect_http, open_http};
use common::certs::{certificates, start};
use common::{TestClient, scenarios};
use tokio::net::TcpListener;

#[tokio::test]
async fn the_scenario_suite_runs_over_https_on_http2_chosen_by_alpn() {
    let dir = std::env::temp_dir().join(format!("acp-tokio-https-{}", std::process::id()));
    let (ca, tls) = certificates(&dir);
    let (port, stop, task) = start(tls).await;
    let trust = TlsClient::trusting(Some(&ca)).expect("the CA");
    let options = HttpClientOptions { tls: Some(trust), ..HttpClientOptions::default() };
    let url = format!("https://localhost:{port}/acp");

    // The server picks h2 from the client's offer (that HTTP/2 is then spoken: the next test).
    let link = open_http(&url, &options).await.expect("open");
    assert_eq!(link.alpn_protocol(), Some(&b"h2"[..]));
    drop(link);

    let (client, mut events) = TestClient::with_events();
    let client = TestClient { permission: Some("allow"), ..client };
    client.files.lock().unwrap().insert("/tmp/remote.txt".into(), "remote content".into());
    let (conn, _) = connect_http(client.clone(), &url, options).await.expect("https connect");
    let session = scenarios::handshake_and_sessions(&conn).await;
    scenarios::prompt_stream(&conn, &session).await;
    scenarios::permission_granted(&conn, &session, &mut events).await;
    scenarios::fs_read(&conn, &session, &client).await;
    scenarios::cancel_mid_turn(&conn, &session, None).await;
    scenarios::concurrent_sessions(&conn, 8).await;
    conn.close().await.expect("close");
    drop(stop);
    let ended = tokio::time::timeout(Duration::from_secs(20), task).await.expect("the server stops");
    ended.expect("join").expect("served");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn an_https_server_whose_ca_is_not_trusted_is_refused_at_open() {
    let dir = std::env::temp_dir().join(format!("acp-tokio-https-untrusted-{}", std::process::id()));
    let (_, tls) = certificates(&dir.join("server"));
    let (other_ca, _) = certificates(&dir.join("other"));
    let (port, _stop, _task) = start(tls).await;
    let trust = TlsClient::trusting(Some(&other_ca)).expect("ca");
    let options = HttpClientOptions { tls: Some(trust), ..HttpClientOptions::default() };
    let refused = connect_http(TestClient::default(), &format!("https://localhost:{port}/acp"), options).await;
    let Err(acp_tokio::Error::Io(e)) = refused.map(drop) else { panic!("not refused as an I/O error") };
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
    assert!(e.to_string().contains("certificate is not trusted"), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}

/// The first bytes of each TLS connection a raw server accepts, offering ALPN `h2` only.
async fn first_bytes(tls: TlsServer) -> (u16, tokio::sync::mpsc::Receiver<Vec<u8>>) {
    use tokio::io::AsyncReadExt;
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let mut config = (**tls.config()).clone();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let (seen, bytes) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let Ok(mut stream) = acceptor.accept(tcp).await else { continue };
            let mut first = vec![0; 24];
            // The probe of `open_http` sends nothing: skip connections that end empty.
            if stream.read_exact(&mut first).await.is_ok() && seen.send(first).await.is_err() {
                return;
            }
        }
    });
    (port, bytes)
}

#[tokio::test]
async fn the_client_speaks_http2_on_a_connection_where_alpn_chose_h2() {
    use acp_tokio::acp_proto::types::{InitializeRequest, ProtocolVersion};
    let dir = std::env::temp_dir().join(format!("acp-tokio-https-h2-{}", std::process::id()));
    let (ca, tls) = certificates(&dir);
    let (port, mut bytes) = first_bytes(tls).await;
    let options = HttpClientOptions { tls: Some(TlsClient::trusting(Some(&ca)).expect("ca")), ..Default::default() };
    let url = format!("https://localhost:{port}/acp");
    let (conn, _) = connect_http(TestClient::default(), &url, options).await.expect("connect");
    // The initialize POST never gets an answer from this server; its first bytes are enough.
    let initialize = tokio::spawn(async move { conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).await });
    let first = bytes.recv().await.expect("a request");
    assert_eq!(first, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "{}", String::from_utf8_lossy(&first));
    initialize.abort();
    let _ = std::fs::remove_dir_all(dir);
}
