//! What both remote clients share: reading the URL (scheme, host, port), the TCP connection
//! (no delay), TLS for the secure scheme (`wss://`, `https://`; feature `tls`), and what the
//! server said ([`RemoteInfo`]).

use std::io;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
// The `http` crate's `Uri` (hyper re-exports it; tungstenite's requests carry the same type).
use hyper::Uri;

/// What a remote connection runs over: TCP, or TLS over TCP.
pub(crate) trait Transport: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Transport for T {}

/// Whom a secure server must prove to be (`None`: the platform's roots).
#[cfg(feature = "tls")]
pub(crate) type Trust = Option<super::TlsClient>;
/// Without the `tls` feature there is nothing to trust: secure URLs are refused.
#[cfg(not(feature = "tls"))]
#[derive(Debug, Clone)]
pub(crate) struct Trust;

/// What the server said when the connection opened: the WebSocket upgrade's response. Over
/// Streamable HTTP it is empty (the server names the connection only when it answers
/// `initialize`; see `connect_http`).
#[derive(Debug, Clone, Default)]
pub struct RemoteInfo {
    /// The `Acp-Connection-Id` header of the upgrade response, when the server sent one.
    pub connection_id: Option<String>,
    /// The `Set-Cookie` headers of the upgrade response (name=value parts), to send back as a
    /// `Cookie` header when reconnecting (the RFD requires clients to keep cookies for affinity).
    pub cookies: Vec<String>,
}

/// Where a URL points: its host (an IPv6 literal without brackets), its port (the scheme's
/// default when none is given), and whether its scheme is the secure one.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) secure: bool,
}

impl Target {
    /// `uri` with the scheme `plain` (port 80 by default) or `secure` (443); any other scheme,
    /// or no host, is an [`io::ErrorKind::InvalidInput`] naming what was expected.
    pub(crate) fn of(uri: &Uri, plain: &str, secure: &str) -> io::Result<Target> {
        let secure = match uri.scheme_str() {
            Some(s) if s == plain => false,
            Some(s) if s == secure => true,
            _ => return Err(invalid(format!("{uri}: the URL must start with {plain}:// or {secure}://"))),
        };
        let host = uri.host().filter(|h| !h.is_empty()).ok_or_else(|| invalid(format!("{uri}: no host")))?;
        let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host).to_owned();
        let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
        Ok(Target { host, port, secure })
    }

    /// The connection: TCP without Nagle's delay (small messages leave at once), then for the
    /// secure scheme the TLS handshake offering `alpn`. Also returns the ALPN protocol the
    /// server chose (`None` over plain TCP or when it chose none).
    pub(crate) async fn dial(
        &self,
        trust: &Trust,
        alpn: &[&[u8]],
    ) -> io::Result<(Box<dyn Transport>, Option<Vec<u8>>)> {
        let tcp = TcpStream::connect((self.host.as_str(), self.port)).await?;
        tcp.set_nodelay(true)?;
        if !self.secure {
            return Ok((Box::new(tcp), None));
        }
        secure(&self.host, tcp, trust, alpn).await
    }
}

#[cfg(feature = "tls")]
async fn secure(
    host: &str,
    tcp: TcpStream,
    trust: &Trust,
    alpn: &[&[u8]],
) -> io::Result<(Box<dyn Transport>, Option<Vec<u8>>)> {
    let trust = match trust {
        Some(tls) => tls.clone(),
        None => super::TlsClient::trusting(None)?,
    };
    let tls = trust.with_alpn(alpn).connect(host, tcp).await?;
    let chosen = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
    Ok((Box::new(tls), chosen))
}

#[cfg(not(feature = "tls"))]
async fn secure(
    host: &str,
    _tcp: TcpStream,
    _trust: &Trust,
    _alpn: &[&[u8]],
) -> io::Result<(Box<dyn Transport>, Option<Vec<u8>>)> {
    let what = format!("{host}: wss:// and https:// need acp-tokio's `tls` feature");
    Err(io::Error::new(io::ErrorKind::Unsupported, what))
}

pub(crate) fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: &str, plain: &str, secure: &str) -> io::Result<Target> {
        Target::of(&url.parse().expect("a URI"), plain, secure)
    }

    #[test]
    fn the_scheme_names_the_default_port_and_tls_and_brackets_leave_ipv6_hosts() {
        let t = target("https://example.com/acp", "http", "https").expect("https");
        assert_eq!((t.host.as_str(), t.port, t.secure), ("example.com", 443, true));
        let t = target("ws://[::1]:8765/acp", "ws", "wss").expect("ws");
        assert_eq!((t.host.as_str(), t.port, t.secure), ("::1", 8765, false));
        let e = target("wss://example.com/acp", "http", "https").expect_err("not http");
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("http:// or https://"), "{e}");
    }

    /// Without the `tls` feature a secure URL is refused, naming the feature.
    #[cfg(not(feature = "tls"))]
    #[tokio::test]
    async fn without_tls_a_secure_url_is_refused_naming_the_feature() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let t = target(&format!("https://127.0.0.1:{port}/acp"), "http", "https").expect("https");
        let e = t.dial(&Trust, &[]).await.map(drop).expect_err("refused");
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        assert!(e.to_string().contains("`tls` feature"), "{e}");
    }
}
