//! `acp serve --tls-cert/--tls-key` and `acp client --connect wss://… --ca-file`: TLS end to end
//! with certificates made at test time (a private CA and a server certificate it signs).

use crate::common;

use std::process::Child;
use std::sync::{Arc, Mutex};

use common::*;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

/// A CA's certificate (PEM) and, signed by it, a certificate for `localhost` and `127.0.0.1`
/// with its key (PEM).
struct Certificates {
    ca: String,
    cert: String,
    key: String,
}

fn certificates(name: &str) -> Certificates {
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, format!("{name} test CA"));
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().expect("ca key")).expect("ca");
    let server = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).expect("params");
    let key = KeyPair::generate().expect("key");
    let cert = server.signed_by(&key, &ca).expect("signed");
    Certificates { ca: ca.pem(), cert: cert.pem(), key: key.serialize_pem() }
}

/// `acp serve --tls-cert --tls-key` of the reference agent on an ephemeral loopback port.
struct Served {
    child: Child,
    stderr: Arc<Mutex<String>>,
    port: String,
    _reaper: KillOnDrop,
}

impl Served {
    fn start(dir: &TempDir, certificates: &Certificates) -> Served {
        let (cert, key) = (dir.file("cert.pem", &certificates.cert), dir.file("key.pem", &certificates.key));
        let acp = acp();
        let acp = acp.to_str().unwrap();
        let marker = unique_marker();
        let args = ["serve", "--listen", "127.0.0.1:0", "--tls-cert", &cert, "--tls-key", &key, "--", acp, "agent"];
        let mut args = args.to_vec();
        args.extend_from_slice(&["--quiet", "--slow-ms", &marker]);
        let Serving { child, stderr, addr } = start_serving(&args, dir.path());
        let log = stderr.lock().unwrap().clone();
        assert!(log.contains(" tls=on "), "{log}");
        let port = addr.rsplit(':').next().expect("a port").to_owned();
        Served { child, stderr, port, _reaper: KillOnDrop(vec![marker]) }
    }

    /// SIGTERM: the server exits 0.
    fn stop(self) -> String {
        stop_serving(self.child, self.stderr).stderr
    }
}

/// A full turn (the agent asks to read a file of the client's: permission, then fs read) over
/// `SCHEME://`, by name and by address, trusting the private CA with `--ca-file`.
fn a_full_turn_with_a_private_ca(scheme: &str) {
    let dir = TempDir::new(&format!("tls-turn-{scheme}"));
    let certificates = certificates("private");
    let ca = dir.file("ca.pem", &certificates.ca);
    let path = dir.file("notes.txt", "hello over tls\n");
    let served = Served::start(&dir, &certificates);
    for host in ["localhost", "127.0.0.1"] {
        let url = format!("{scheme}://{host}:{}/acp", served.port);
        let prompt = format!("read {path}");
        let run = run(&["client", "--allow", "--connect", &url, "--ca-file", &ca, "-p", &prompt], dir.path(), "");
        assert_eq!(run.code(), 0, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
        assert!(run.stdout.contains(&format!("connected to {url}")), "{}", run.stdout);
        assert!(run.stdout.contains("hello over tls"), "the agent read the client's file: {}", run.stdout);
    }
    let log = served.stop();
    assert!(log.contains("event=connection_closed"), "{log}");
}

#[test]
fn a_full_turn_over_wss_with_a_private_ca() {
    a_full_turn_with_a_private_ca("wss");
}

#[test]
fn a_full_turn_over_https_with_a_private_ca() {
    a_full_turn_with_a_private_ca("https");
}

#[test]
fn a_plain_text_client_on_the_tls_port_fails_cleanly_and_the_server_serves_on() {
    let dir = TempDir::new("tls-plain");
    let certificates = certificates("private");
    let ca = dir.file("ca.pem", &certificates.ca);
    let served = Served::start(&dir, &certificates);
    let plain = format!("ws://127.0.0.1:{}/acp", served.port);
    let run1 = run(&["client", "--deny", "--connect", &plain, "-p", "hi"], dir.path(), "");
    let said = format!("{}{}", run1.stdout, run1.stderr);
    assert_ne!(run1.code(), 0, "{said}");
    assert!(said.contains("could not connect") && said.contains("400"), "{said}");
    let secure = format!("wss://localhost:{}/acp", served.port);
    let run2 = run(&["client", "--deny", "--connect", &secure, "--ca-file", &ca, "-p", "hi"], dir.path(), "");
    assert_eq!(run2.code(), 0, "stdout:\n{}\nstderr:\n{}", run2.stdout, run2.stderr);
    served.stop();
}

/// `SCHEME://` to a server whose certificate `--ca-file` does not vouch for.
fn an_untrusted_ca_is_refused(scheme: &str) {
    let dir = TempDir::new(&format!("tls-untrusted-{scheme}"));
    let served = Served::start(&dir, &certificates("private"));
    let other = dir.file("other-ca.pem", &certificates("other").ca);
    let url = format!("{scheme}://localhost:{}/acp", served.port);
    let run = run(&["client", "--deny", "--connect", &url, "--ca-file", &other, "-p", "hi"], dir.path(), "");
    let said = format!("{}{}", run.stdout, run.stderr);
    assert_ne!(run.code(), 0, "{said}");
    assert!(said.contains("could not connect") && said.contains("certificate is not trusted"), "{said}");
    assert!(said.contains("--ca-file"), "the hint: {said}");
    served.stop();
}

#[test]
fn a_certificate_of_an_untrusted_ca_is_refused_with_a_clear_error() {
    an_untrusted_ca_is_refused("wss");
}

#[test]
fn a_certificate_of_an_untrusted_ca_is_refused_with_a_clear_error_over_https() {
    an_untrusted_ca_is_refused("https");
}

#[test]
fn unreadable_or_invalid_pem_files_are_refused_before_listening() {
    let dir = TempDir::new("tls-bad-files");
    let certificates = certificates("private");
    let cert = dir.file("cert.pem", &certificates.cert);
    let key = dir.file("key.pem", &certificates.key);
    let garbage = dir.file("garbage.pem", "not a pem file\n");
    let missing = dir.path().join("missing.pem").to_string_lossy().into_owned();
    let other_key = dir.file("other-key.pem", &KeyPair::generate().expect("key").serialize_pem());
    let cases = [
        (missing.as_str(), key.as_str(), "cannot read"),
        (garbage.as_str(), key.as_str(), "no certificate in it"),
        (cert.as_str(), garbage.as_str(), "no private key in it"),
        (cert.as_str(), other_key.as_str(), "do not make a usable certificate"),
    ];
    for (cert, key, why) in cases {
        let args = ["serve", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--", "true"];
        let run = run(&args, dir.path(), "");
        assert_eq!(run.code(), 2, "{cert} {key}: {}", run.stderr);
        assert!(run.stderr.contains(why), "{cert} {key}: expected {why:?} in {}", run.stderr);
        assert!(!run.stderr.contains("event=listening"), "{}", run.stderr);
    }
    let run = run(&["serve", "--tls-cert", &cert, "--", "true"], dir.path(), "");
    assert_eq!(run.code(), 2, "--tls-cert needs --tls-key: {}", run.stderr);
    assert!(run.stderr.contains("--tls-key"), "{}", run.stderr);
}
