//! The agent's branch point between protocol versions: the client's first frame is read
//! through an [`Acceptor`], which picks the version its `initialize` offers and hands on a
//! `Connection<Agent, V1>` or `Connection<Agent, V2>` already fed with every byte it consumed; the bytes read
//! after it go to the driver first. One driver of either version runs the connection from
//! there, so nothing but the handlers differs between the versions.

use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::Instant as StdInstant;

use acp_proto::role;
use acp_proto::types::ProtocolVersion;
use acp_proto::{Accepted, Acceptor, Answer, Config, InboundRequest, Instant, Notification, V1, V2};

use crate::agent::{AgentOptions, driver_options, run};
use crate::driver::{Link, READ_CHUNK, Service, Start};
use crate::error::Error;
use crate::sync::CancelToken;
use crate::transport::Io;

/// The v1 side of an agent that speaks v2 only: the client's `initialize` offering 1 is
/// answered `-32022` (unsupported protocol version, with `{requested: 1, supported: [2]}`), any
/// other request `-32601` ([`Acceptor::refusal`]).
pub(crate) struct V1Refused;

impl Service<V1, role::Agent> for V1Refused {
    fn request(&self, link: &Link<V1, role::Agent>, _: &CancelToken, request: InboundRequest) {
        let id = request.id();
        link.answer(id, || Answer::error(id, Acceptor::refusal(request.request(), &[ProtocolVersion::V2])));
    }

    fn notification(&self, _: &Link<V1, role::Agent>, _: Notification) {}
}

/// The connection the client's `initialize` chose.
enum Chosen {
    V1(Start<V1, role::Agent>),
    V2(Start<V2, role::Agent>),
}

/// Serves the client with `v2` or `v1` as its `initialize` chooses, over `io`.
pub(crate) fn serve(
    v2: Arc<dyn Service<V2, role::Agent>>,
    v1: Arc<dyn Service<V1, role::Agent>>,
    mut io: Io,
    options: AgentOptions,
) -> Result<(), Error> {
    let options = driver_options(options);
    let config = &options.config;
    let chosen = match &mut io {
        // A reader that is not ready (non-blocking) is not waited for here: an error.
        Io::Threads(reader, writer) => accept(reader, writer, config, |_| Err(io::ErrorKind::WouldBlock.into()))?,
        #[cfg(unix)]
        Io::Fds(reader, writer) => accept(reader, writer, config, |r| readable(r.as_fd()))?,
    };
    match chosen {
        Chosen::V1(start) => run(v1, start, io, options),
        Chosen::V2(start) => run(v2, start, io, options),
    }
}

/// Waits until a descriptor in non-blocking mode has input.
#[cfg(unix)]
fn readable(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<()> {
    use rustix::event::{PollFd, PollFlags, poll};
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    match poll(&mut fds, None) {
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Reads the client's first frames into an [`Acceptor`] until its `initialize` chose the
/// version (or the input ended), writing the acceptor's answers to what came before it at
/// once (a client may wait for them). `wait`: what to do when the reader has nothing yet.
fn accept<R: Read, W: Write>(
    reader: &mut R,
    writer: &mut W,
    config: &Config,
    wait: impl Fn(&R) -> io::Result<()>,
) -> Result<Chosen, Error> {
    let epoch = StdInstant::now();
    let now = || Instant::from_std(epoch, StdInstant::now());
    let mut acceptor = Acceptor::new(config.clone(), now());
    let mut buf = vec![0; READ_CHUNK];
    let mut out = Vec::new();
    let unread = loop {
        let n = match reader.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait(reader)?;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        if n == 0 {
            acceptor.handle_eof(now());
            break Vec::new();
        }
        let mut fed = 0;
        while fed < n && !acceptor.is_decided() {
            let taken = acceptor.handle_input(now(), &buf[fed..n]);
            fed += taken;
            // The answers to what came before `initialize`: written before reading on.
            if acceptor.poll_transmit(&mut out) > 0 {
                writer.write_all(&out)?;
                writer.flush()?;
                out.clear();
            } else if taken == 0 && !acceptor.is_decided() {
                return Err(io::Error::other("the client's first frames were not taken").into());
            }
        }
        if acceptor.is_decided() {
            break buf[fed..n].to_vec();
        }
    };
    match acceptor.accept() {
        Ok(Accepted::V1(conn)) => Ok(Chosen::V1(Start { conn, epoch, unread })),
        Ok(Accepted::V2(conn)) => Ok(Chosen::V2(Start { conn, epoch, unread })),
        // Decided, or the input ended (which decides v1): not reached.
        Ok(_) | Err(_) => Err(Error::ConnectionClosed),
    }
}
