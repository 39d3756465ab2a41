//! Who may use a Streamable HTTP connection and its sessions (issue 28, item 1): connection ids
//! that tell nothing of each other, bound to the token that opened them, sessions bound to
//! their connection; and the bearer scheme read in any case (RFC 7235). Spoken by hand over
//! HTTP/1.1, as a second client on the same server would.

use crate::common;

use acp_tokio::remote::WsServerOptions;
use common::raw_http::*;
use serde_json::{Value, json};

fn note() -> Value {
    json!({"jsonrpc": "2.0", "method": "_x/note", "params": {}})
}

fn prompt(id: u64, session: &str, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
}

/// What a client could guess from its own id: the ids around it, counting up or down in the
/// decimal number it ends with, and in its last hex digit.
fn neighbours(own: &str) -> Vec<String> {
    let digits = own.len() - own.bytes().rev().take_while(u8::is_ascii_digit).count();
    let mut guesses = Vec::new();
    if let Ok(n) = own[digits..].parse::<u64>() {
        for k in 1..=3 {
            guesses.push(format!("{}{}", &own[..digits], n + k));
            if let Some(below) = n.checked_sub(k) {
                guesses.push(format!("{}{below}", &own[..digits]));
            }
        }
    }
    let last = own.len() - 1;
    for hex in "0123456789abcdef".chars() {
        guesses.push(format!("{}{hex}", &own[..last]));
    }
    guesses.retain(|g| g != own);
    guesses
}

#[tokio::test]
async fn a_client_cannot_reach_another_clients_connection_by_an_id_derived_from_its_own() {
    let server = server(WsServerOptions { node_id: Some("n1".into()), ..WsServerOptions::default() }).await;
    let addr = server.addr.as_str();
    let victim = initialize(addr).await;
    let mut victims_stream = Sse::open(addr, &victim, None).await.expect("the victim's stream");
    let session = new_session(addr, &[], &victim, &mut victims_stream, 2).await;
    let attacker = initialize(addr).await;
    for id in [&victim, &attacker] {
        let random = id.strip_prefix("n1-").expect("the node id first");
        assert!(random.len() >= 32 && random.bytes().all(|b| b.is_ascii_hexdigit()), "128 random bits: {id}");
    }
    let unknown = post(addr, Some("n1-no-such-connection"), None, &note()).await;
    for guess in neighbours(&attacker) {
        let injected = post(addr, Some(&guess), Some(&session), &prompt(9, &session, "injected")).await;
        assert_eq!((injected.status, &injected.body), (404, &unknown.body), "POST to {guess} (the victim is {victim})");
        assert_eq!(Sse::open(addr, &guess, None).await.err(), Some(404), "GET {guess}");
        let deleted = request(addr, "DELETE", &[("Acp-Connection-Id", &guess)], "").await;
        assert_eq!(deleted.status, 404, "DELETE {guess}");
    }
    // The victim's connection is whole: its own turn runs.
    let mut session_stream = Sse::open(addr, &victim, Some(&session)).await.expect("the session's stream");
    assert_eq!(post(addr, Some(&victim), Some(&session), &prompt(3, &session, "mine")).await.status, 202);
    let echoed = session_stream.next().await.expect("the victim's own update");
    assert_eq!(echoed["params"]["update"]["content"]["text"], "mine", "{echoed}");
}

#[tokio::test]
async fn a_connection_answers_only_the_token_that_opened_it_and_anyone_else_gets_the_404_of_an_unknown_id() {
    let options = WsServerOptions { bearer_tokens: vec!["alice".into(), "bob".into()], ..WsServerOptions::default() };
    let server = server(options).await;
    let addr = server.addr.as_str();
    let alice = [("Authorization", "Bearer alice")];
    let bob = [("Authorization", "Bearer bob")];
    let conn = initialize_with(addr, &alice).await;
    let mut stream = Sse::open_with(addr, &alice, &conn, None).await.expect("alice's stream");
    let session = new_session(addr, &alice, &conn, &mut stream, 2).await;
    let unknown = post_with(addr, &bob, Some("no-such-connection"), None, &note()).await;
    assert_eq!(unknown.status, 404);
    // Bob knows alice's connection id: it is unknown to him, whatever he does with it.
    let taken = post_with(addr, &bob, Some(&conn), Some(&session), &prompt(9, &session, "injected")).await;
    assert_eq!((taken.status, &taken.body), (404, &unknown.body), "POST");
    assert_eq!(Sse::open_with(addr, &bob, &conn, None).await.err(), Some(404), "GET");
    assert_eq!(Sse::open_with(addr, &bob, &conn, Some(&session)).await.err(), Some(404), "GET a session");
    let deleted = request(addr, "DELETE", &[("Authorization", "Bearer bob"), ("Acp-Connection-Id", &conn)], "").await;
    assert_eq!((deleted.status, &deleted.body), (404, &unknown.body), "DELETE");
    // Without a token (or with a wrong one) nothing is looked up at all.
    assert_eq!(post(addr, Some(&conn), None, &note()).await.status, 401);
    // Alice's connection is whole.
    let mut session_stream = Sse::open_with(addr, &alice, &conn, Some(&session)).await.expect("alice's session");
    assert_eq!(post_with(addr, &alice, Some(&conn), Some(&session), &prompt(3, &session, "mine")).await.status, 202);
    let echoed = session_stream.next().await.expect("alice's own update");
    assert_eq!(echoed["params"]["update"]["content"]["text"], "mine", "{echoed}");
}

#[tokio::test]
async fn the_bearer_scheme_is_accepted_in_any_case() {
    let server = server(WsServerOptions { bearer_token: Some("t0ken".into()), ..WsServerOptions::default() }).await;
    let addr = server.addr.as_str();
    let conn = initialize_with(addr, &[("Authorization", "bearer t0ken")]).await;
    let _stream = Sse::open_with(addr, &[("Authorization", "BEARER t0ken")], &conn, None).await.expect("a stream");
    let noted = post_with(addr, &[("Authorization", "bEaReR  t0ken")], Some(&conn), None, &note()).await;
    assert_eq!(noted.status, 202, "{noted:?}");
    let basic = post_with(addr, &[("Authorization", "Basic t0ken")], Some(&conn), None, &note()).await;
    assert_eq!(basic.status, 401);
}

#[tokio::test]
async fn a_connection_cannot_name_a_session_of_another() {
    let server = server(WsServerOptions::default()).await;
    let addr = server.addr.as_str();
    // The echo agent numbers sessions per connection: A has sess-0 and sess-1, B only sess-0.
    let a = initialize(addr).await;
    let mut a_stream = Sse::open(addr, &a, None).await.expect("A's stream");
    new_session(addr, &[], &a, &mut a_stream, 2).await;
    let a_only = new_session(addr, &[], &a, &mut a_stream, 3).await;
    let b = initialize(addr).await;
    let mut b_stream = Sse::open(addr, &b, None).await.expect("B's stream");
    let b_own = new_session(addr, &[], &b, &mut b_stream, 2).await;
    assert_ne!(a_only, b_own);
    // In the header, in the params, or in both: B never reaches A's session.
    assert_eq!(post(addr, Some(&b), Some(&a_only), &prompt(4, &a_only, "x")).await.status, 404, "header and params");
    assert_eq!(post(addr, Some(&b), Some(&b_own), &prompt(5, &a_only, "x")).await.status, 404, "params only");
    let ext = json!({"jsonrpc": "2.0", "id": 6, "method": "_x/inspect", "params": {"sessionId": a_only}});
    assert_eq!(post(addr, Some(&b), None, &ext).await.status, 404, "a method that needs no header");
    let announce = json!({"jsonrpc": "2.0", "method": "_announce", "params": {"sessionId": a_only, "text": "x"}});
    assert_eq!(post(addr, Some(&b), None, &announce).await.status, 404, "a notification");
    assert_eq!(Sse::open(addr, &b, Some(&a_only)).await.err(), Some(404), "its stream");
    // The header and the params must agree, even on two sessions of B's own.
    let b_second = new_session(addr, &[], &b, &mut b_stream, 8).await;
    let mixed = post(addr, Some(&b), Some(&b_own), &prompt(9, &b_second, "x")).await;
    assert_eq!(mixed.status, 400, "{mixed:?}");
    // B's own session, and A's, still work for their owners.
    assert_eq!(post(addr, Some(&b), Some(&b_own), &prompt(7, &b_own, "b")).await.status, 202);
    assert_eq!(post(addr, Some(&a), Some(&a_only), &prompt(4, &a_only, "a")).await.status, 202);
}

/// With client certificates (a TLS configuration that asks for them), a connection id is bound
/// to the certificate of the client that opened it, even with no token at all.
#[cfg(feature = "tls")]
mod client_certificates {
    use std::sync::Arc;

    use acp_tokio::remote::{TlsServer, WsServerOptions};
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
    use serde_json::json;

    use super::common::raw_http::{Answer, exchange, server};

    fn provider() -> Arc<rustls::crypto::CryptoProvider> {
        Arc::new(rustls::crypto::ring::default_provider())
    }

    /// A certificate for `name` signed by `ca`, and its key.
    fn issued(ca: &CertifiedIssuer<'_, KeyPair>, name: &str) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
        let key = KeyPair::generate().expect("key");
        let cert = CertificateParams::new(vec![name.to_owned()]).expect("params").signed_by(&key, ca).expect("signed");
        (vec![cert.der().clone()], PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())))
    }

    struct Pki {
        server: TlsServer,
        alice: Arc<rustls::ClientConfig>,
        bob: Arc<rustls::ClientConfig>,
    }

    fn pki() -> Pki {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, "binding test CA");
        let ca = CertifiedIssuer::self_signed(params, KeyPair::generate().expect("ca key")).expect("ca");
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.der().clone()).expect("the CA");
        let roots = Arc::new(roots);
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(roots.clone(), provider())
            .build()
            .expect("a client verifier");
        let (chain, key) = issued(&ca, "localhost");
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_client_cert_verifier(verifier)
            .with_single_cert(chain, key)
            .expect("a server config");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let client = |name: &str| {
            let (chain, key) = issued(&ca, name);
            let config = rustls::ClientConfig::builder_with_provider(provider())
                .with_safe_default_protocol_versions()
                .expect("versions")
                .with_root_certificates(roots.clone())
                .with_client_auth_cert(chain, key)
                .expect("a client config");
            Arc::new(config)
        };
        let (alice, bob) = (client("alice"), client("bob"));
        Pki { server: TlsServer::new(Arc::new(config)), alice, bob }
    }

    async fn request(addr: &str, as_: &Arc<rustls::ClientConfig>, headers: &[(&str, &str)], body: &str) -> Answer {
        let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let connector = tokio_rustls::TlsConnector::from(as_.clone());
        let name = ServerName::try_from("localhost").expect("a name");
        let tls = connector.connect(name, tcp).await.expect("a TLS connection");
        let method = if body.is_empty() { "DELETE" } else { "POST" };
        exchange(tls, addr, method, headers, body).await
    }

    #[tokio::test]
    async fn a_connection_answers_only_the_client_certificate_that_opened_it() {
        let pki = pki();
        let server = server(WsServerOptions { tls: Some(pki.server), ..WsServerOptions::default() }).await;
        let addr = server.addr.as_str();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}});
        let json = [("Content-Type", "application/json")];
        let opened = request(addr, &pki.alice, &json, &init.to_string()).await;
        assert_eq!(opened.status, 200, "{opened:?}");
        let conn = opened.header("acp-connection-id").expect("an id").to_owned();
        let note = json!({"jsonrpc": "2.0", "method": "_x/note", "params": {}}).to_string();
        let named = [("Content-Type", "application/json"), ("Acp-Connection-Id", conn.as_str())];
        let unknown = [("Content-Type", "application/json"), ("Acp-Connection-Id", "no-such-connection")];
        let unknown = request(addr, &pki.bob, &unknown, &note).await;
        let taken = request(addr, &pki.bob, &named, &note).await;
        assert_eq!((taken.status, &taken.body), (404, &unknown.body), "bob's POST");
        assert_eq!(request(addr, &pki.bob, &[("Acp-Connection-Id", conn.as_str())], "").await.status, 404, "DELETE");
        assert_eq!(request(addr, &pki.alice, &named, &note).await.status, 202, "alice's POST");
    }
}
