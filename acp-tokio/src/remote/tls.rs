//! TLS for the remote transports (feature `tls`), on rustls with its ring provider.
//!
//! * Server: [`TlsServer`] carries a rustls `ServerConfig` (made from PEM files with
//!   [`TlsServer::from_pem_files`], which offers ALPN `h2` and `http/1.1`); set it as
//!   [`WsServerOptions::tls`](super::WsServerOptions::tls) and the same `/acp` endpoint is
//!   served over `https://` and `wss://`. A client that speaks plain HTTP to that port gets a
//!   `400` saying so (the first byte of a TLS connection is a handshake record, `0x16`).
//! * Client: [`TlsClient`] carries a rustls `ClientConfig`: by default trusting the platform's
//!   roots (`rustls-native-certs`: what the OS and its administrator trust), or only the CAs of
//!   a PEM file (like curl's `--cacert`), for a private CA. [`client_config`] builds the config
//!   with the ALPN protocols a transport needs (`http/1.1` for the WebSocket upgrade, `h2` for
//!   Streamable HTTP), for any client of this crate to reuse.
//!
//! Handshakes on the server run in each connection's task (one slow client never holds up
//! another), each within [`HANDSHAKE_TIMEOUT`]; a connection in its handshake counts against
//! the server's cap on unauthenticated connections (see `listen.rs`). The client's
//! certificate, when the configuration asks for one, is what its connection ids are bound to
//! (see `auth.rs`).

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// How long a client may take to complete its handshake before it is dropped.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The answer to plain HTTP on a TLS port.
const PLAIN_HTTP_ANSWER: &[u8] = b"HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\nconnection: close\r\n\
content-length: 54\r\n\r\nthis port speaks TLS: use https:// or wss:// instead.\n";

/// The TLS side of a server: a rustls `ServerConfig`.
#[derive(Clone)]
pub struct TlsServer(Arc<rustls::ServerConfig>);

impl std::fmt::Debug for TlsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TlsServer").field(&self.0.alpn_protocols).finish()
    }
}

impl TlsServer {
    /// Serves with `config` as it is (its ALPN protocols should name `h2` and `http/1.1`).
    pub fn new(config: Arc<rustls::ServerConfig>) -> TlsServer {
        TlsServer(config)
    }

    /// A certificate chain (PEM, leaf first) and its private key (PEM: PKCS#8, PKCS#1 or
    /// SEC1), offering ALPN `h2` and `http/1.1`. Errors name the file and what is wrong with it.
    pub fn from_pem_files(cert: &Path, key: &Path) -> io::Result<TlsServer> {
        let chain = read_certificates(cert)?;
        let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| pem_error(key, "private key", &e))?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(io::Error::other)?
            .with_no_client_auth()
            .with_single_cert(chain, key_der)
            .map_err(|e| {
                let what = format!("{} and {} do not make a usable certificate: {e}", cert.display(), key.display());
                io::Error::new(io::ErrorKind::InvalidData, what)
            })?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(TlsServer(Arc::new(config)))
    }

    /// The rustls configuration.
    pub fn config(&self) -> &Arc<rustls::ServerConfig> {
        &self.0
    }
}

/// The TLS side of a client: a rustls `ClientConfig`.
#[derive(Clone)]
pub struct TlsClient(Arc<rustls::ClientConfig>);

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TlsClient").field(&self.0.alpn_protocols).finish()
    }
}

impl TlsClient {
    /// Connects with `config` as it is.
    pub fn new(config: Arc<rustls::ClientConfig>) -> TlsClient {
        TlsClient(config)
    }

    /// Trusts the platform's roots, or with `ca_file` only the CAs in that PEM file.
    pub fn trusting(ca_file: Option<&Path>) -> io::Result<TlsClient> {
        Ok(TlsClient(Arc::new(client_config(ca_file, &[])?)))
    }

    /// The rustls configuration.
    pub fn config(&self) -> &Arc<rustls::ClientConfig> {
        &self.0
    }

    /// The same trust with other ALPN protocols (a transport's own).
    pub fn with_alpn(&self, protocols: &[&[u8]]) -> TlsClient {
        let mut config = (*self.0).clone();
        config.alpn_protocols = protocols.iter().map(|p| p.to_vec()).collect();
        TlsClient(Arc::new(config))
    }

    /// The handshake over `tcp` with `host` (a name or an IP address, as in the URL). An
    /// untrusted certificate fails with [`io::ErrorKind::InvalidData`] and says so.
    pub async fn connect(&self, host: &str, tcp: TcpStream) -> io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("{host}: not a server name: {e}")))?;
        let connector = tokio_rustls::TlsConnector::from(self.0.clone());
        connector.connect(name, tcp).await.map_err(|e| handshake_error(host, e))
    }
}

/// A client configuration trusting the platform's roots, or with `ca_file` only the CAs in
/// that PEM file, offering `alpn`.
pub fn client_config(ca_file: Option<&Path>, alpn: &[&[u8]]) -> io::Result<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    match ca_file {
        Some(path) => {
            for certificate in read_certificates(path)? {
                roots.add(certificate).map_err(|e| {
                    io::Error::new(io::ErrorKind::InvalidData, format!("{}: not a usable CA: {e}", path.display()))
                })?;
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _ignored) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found.errors.first().map(|e| format!(" ({e})")).unwrap_or_default();
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("no root certificates found on this system{why}; give the server's CA with --ca-file"),
                ));
            }
        }
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Every certificate of a PEM file; none is an error.
fn read_certificates(path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let certificates = CertificateDer::pem_file_iter(path)
        .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
        .map_err(|e| pem_error(path, "certificates", &e))?;
    if certificates.is_empty() {
        let what = format!("{}: no certificate in it (a PEM `BEGIN CERTIFICATE` block)", path.display());
        return Err(io::Error::new(io::ErrorKind::InvalidData, what));
    }
    Ok(certificates)
}

fn pem_error(path: &Path, what: &str, e: &rustls::pki_types::pem::Error) -> io::Error {
    match e {
        rustls::pki_types::pem::Error::Io(e) => {
            io::Error::new(e.kind(), format!("cannot read {}: {e}", path.display()))
        }
        rustls::pki_types::pem::Error::NoItemsFound => {
            io::Error::new(io::ErrorKind::InvalidData, format!("{}: no {what} in it (PEM expected)", path.display()))
        }
        other => {
            io::Error::new(io::ErrorKind::InvalidData, format!("{}: not valid PEM {what}: {other}", path.display()))
        }
    }
}

fn handshake_error(host: &str, e: io::Error) -> io::Error {
    let untrusted = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|e| matches!(e, rustls::Error::InvalidCertificate(_)));
    if untrusted {
        let what =
            format!("{host}: the server's certificate is not trusted ({e}); for a private CA give it with --ca-file");
        io::Error::new(io::ErrorKind::InvalidData, what)
    } else {
        io::Error::new(e.kind(), format!("{host}: TLS handshake failed: {e}"))
    }
}

/// The server's handshake; plain HTTP is answered `400` and dropped.
pub(crate) async fn handshake(
    tls: &TlsServer,
    mut tcp: TcpStream,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    let mut first = [0u8; 1];
    let n = tcp.peek(&mut first).await.ok()?;
    if n == 1 && first[0] != 0x16 {
        if first[0].is_ascii_uppercase() {
            let _ = tcp.write_all(PLAIN_HTTP_ANSWER).await;
            let _ = tcp.shutdown().await;
        }
        return None;
    }
    tokio_rustls::TlsAcceptor::from(tls.0.clone()).accept(tcp).await.ok()
}
