//! `acp __check-relay SOCKET`: the "agent" a client under test launches. It connects its
//! stdin and stdout to the checker's Unix socket and copies bytes both ways unchanged; it
//! exits as soon as either side ends (the client closed its stdin, or the checker closed the
//! socket), so that nothing outlives a scenario.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::thread;

/// The hidden subcommand's name.
pub const RELAY: &str = "__check-relay";

/// Relays stdin to the socket and the socket to stdout until either ends; returns the
/// process exit code (0, or 1 when the socket cannot be reached).
pub fn run(socket: &Path) -> u8 {
    let stream = match UnixStream::connect(socket) {
        Ok(stream) => stream,
        Err(e) => {
            eprintln!("acp {RELAY}: cannot connect to {}: {e}", socket.display());
            return 1;
        }
    };
    let Ok(mut upstream) = stream.try_clone() else { return 1 };
    // Client -> checker. When the client closes our stdin, the checker sees end of file.
    let _ = thread::Builder::new().name("relay-in".into()).spawn(move || {
        let _ = copy(&mut io::stdin().lock(), &mut upstream);
        let _ = upstream.shutdown(Shutdown::Write);
        // The client ended the agent's input: a well-behaved agent exits now.
        std::process::exit(0);
    });
    // Checker -> client.
    let mut downstream = stream;
    let _ = copy(&mut downstream, &mut io::stdout().lock());
    0
}

/// Copies until end of file or an error, flushing after every read (lines must not wait).
fn copy(from: &mut impl Read, to: &mut impl Write) -> io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        to.write_all(&buf[..n])?;
        to.flush()?;
    }
}
