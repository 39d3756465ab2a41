//! Who a request comes from, and what a Streamable HTTP connection id is bound to.
//!
//! Rules, each with a test (here, or in `tests/tokio/remote_http_binding.rs`):
//! * Credentials: `Authorization: Bearer TOKEN`, the scheme in any case (RFC 7235 §2.1: auth
//!   schemes are case-insensitive), then one or more spaces, then the token. It is compared in
//!   constant time with every token the server accepts ([`WsServerOptions::bearer_token`] and
//!   [`WsServerOptions::bearer_tokens`], each a credential of its own), all of them every time,
//!   so the time taken does not tell which one matched. An empty token never matches. No token
//!   configured: every request is let in (and the caller has no credential).
//! * A connection id is the node id (if any), then 128 bits from the operating system's CSPRNG
//!   in hex: nothing in one id tells another. No randomness, no connection (`503`).
//! * Binding: a Streamable HTTP connection remembers who opened it ([`Caller`]: the index of
//!   the token it presented, and the TLS client certificate when the server's TLS
//!   configuration asks for one). A request naming the connection from anyone else gets the
//!   `404` of an unknown id. So without a token and without client certificates (a loopback
//!   server) the id's randomness is the only protection; with a token per user, a user cannot
//!   use another's connection even knowing its id; with client certificates, the id is bound
//!   to the certificate. A wrong token is `401` before any id is looked up.
//!
//! [`WsServerOptions::bearer_token`]: super::WsServerOptions::bearer_token
//! [`WsServerOptions::bearer_tokens`]: super::WsServerOptions::bearer_tokens

use std::io;
use std::sync::Arc;

use axum::http::HeaderMap;
use subtle::ConstantTimeEq;

use super::WsServerOptions;

/// Random bytes in a connection id.
const ID_BYTES: usize = 16;

/// Who a request comes from, as far as a connection's binding goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub(crate) struct Caller {
    /// The index of the token presented among those the server accepts (`None` without tokens).
    token: Option<usize>,
    /// The TLS client certificate (DER) of the transport, when the client presented one.
    certificate: Option<Arc<[u8]>>,
}

/// What the transport tells of a request's connection (a request extension, set by the
/// accept loop).
#[derive(Debug, Clone, Default)]
pub(crate) struct Peer {
    /// The TLS client certificate (DER, the end entity's), when the client presented one.
    pub(crate) certificate: Option<Arc<[u8]>>,
}

/// The caller of a request with `headers` over `peer`, or `None` when the server requires a
/// token and the request has none of those it accepts.
pub(crate) fn caller(options: &WsServerOptions, headers: &HeaderMap, peer: Option<&Peer>) -> Option<Caller> {
    let certificate = peer.and_then(|p| p.certificate.clone());
    let mut tokens = options.bearer_token.iter().chain(options.bearer_tokens.iter()).peekable();
    if tokens.peek().is_none() {
        return Some(Caller { token: None, certificate });
    }
    let given = headers.get("authorization").and_then(|v| bearer(v.as_bytes())).unwrap_or(b"");
    let mut found = None;
    for (i, token) in tokens.enumerate() {
        let matches = bool::from(given.ct_eq(token.as_bytes())) & !given.is_empty();
        found = if matches { Some(i) } else { found };
    }
    found.map(|token| Caller { token: Some(token), certificate })
}

/// The token of an `Authorization` value of scheme `Bearer` (in any case).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let space = value.iter().position(|&b| b == b' ')?;
    let (scheme, rest) = value.split_at(space);
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return None;
    }
    let start = rest.iter().position(|&b| b != b' ')?;
    Some(&rest[start..])
}

/// A fresh connection id: `NODE-` (with a node id) and 32 hex digits of the OS's CSPRNG.
pub(crate) fn new_connection_id(node: Option<&str>) -> io::Result<String> {
    let mut bytes = [0u8; ID_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(format!("no randomness for a connection id: {e}")))?;
    let mut id = node.map(|n| format!("{n}-")).unwrap_or_default();
    for byte in bytes {
        id.push_str(&format!("{byte:02x}"));
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("authorization", HeaderValue::from_str(authorization).expect("a header value"));
        headers
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case_and_the_token_after_any_spaces() {
        for value in ["Bearer t0k", "bearer t0k", "BEARER t0k", "bEaReR   t0k"] {
            assert_eq!(bearer(value.as_bytes()), Some(&b"t0k"[..]), "{value}");
        }
        for value in ["Basic t0k", "Bearert0k", "Bearer", "Bearer ", "Bearer\tt0k", "Token t0k"] {
            assert_eq!(bearer(value.as_bytes()), None, "{value}");
        }
    }

    #[test]
    fn each_token_is_a_credential_of_its_own_and_an_empty_one_never_matches() {
        let options = WsServerOptions {
            bearer_token: Some("first".into()),
            bearer_tokens: vec!["second".into(), String::new()],
            ..WsServerOptions::default()
        };
        let first = caller(&options, &headers("bearer first"), None).expect("the first token");
        let second = caller(&options, &headers("Bearer second"), None).expect("the second token");
        assert_ne!(first, second);
        assert_eq!(caller(&options, &headers("Bearer "), None), None, "an empty token");
        assert_eq!(caller(&options, &headers("Bearer firs"), None), None);
        assert_eq!(caller(&options, &HeaderMap::new(), None), None);
        let open = WsServerOptions::default();
        assert_eq!(caller(&open, &HeaderMap::new(), None), Some(Caller::default()), "no token configured");
    }

    #[test]
    fn a_client_certificate_is_part_of_the_caller() {
        let options = WsServerOptions::default();
        let peer = |der: &[u8]| Peer { certificate: Some(Arc::from(der)) };
        let a = caller(&options, &HeaderMap::new(), Some(&peer(b"a")));
        let b = caller(&options, &HeaderMap::new(), Some(&peer(b"b")));
        assert_ne!(a, b);
        assert_ne!(a, caller(&options, &HeaderMap::new(), None));
    }

    #[test]
    fn connection_ids_carry_128_random_bits_after_the_node() {
        let id = new_connection_id(None).expect("an id");
        assert_eq!(id.len(), 2 * ID_BYTES);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
        let noded = new_connection_id(Some("a1")).expect("an id");
        assert!(noded.starts_with("a1-") && noded.len() == 3 + 2 * ID_BYTES, "{noded}");
        assert_ne!(new_connection_id(None).expect("an id"), id);
    }
}
