//! TLS for the remote tests: certificates made at test time (rcgen: a private CA and a server
//! certificate it signs), and a TLS server of echo agents.
#![cfg(feature = "tls")]

use acp_tokio::AgentOptions;
use acp_tokio::remote::{AgentBackend, TlsServer, WsServerOptions, serve_ws};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::EchoAgent;

/// A private CA's certificate (PEM) and a server configuration with a certificate it signed
/// for `localhost` and `127.0.0.1`.
pub fn certificates(dir: &std::path::Path) -> (std::path::PathBuf, TlsServer) {
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
pub async fn start(tls: TlsServer) -> (u16, oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>) {
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
