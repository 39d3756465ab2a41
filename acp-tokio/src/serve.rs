//! Running an agent's driver: on a connection of one version, or on the one an
//! [`Acceptor`] picks from the client's `initialize` (an agent that speaks both versions, or a
//! v2 agent that answers a v1 client `-32601`).

use acp_proto::role;
use acp_proto::{Connection, Instant};
use tokio::sync::oneshot;

use crate::driver::{Driver, DriverOptions, Handlers};
use crate::io::{ReadBytes, WriteBytes};
use crate::runtime::Runtime;
use crate::version::Version;
use crate::{AgentOptions, Error};

/// What an agent's driver starts from: the transport, the clock's epoch, and the bytes read
/// but not consumed before it started (by an [`Acceptor`]).
pub(crate) struct Launch<Rt, Rd, Wr> {
    rt: Rt,
    epoch: std::time::Instant,
    reader: Rd,
    writer: Wr,
    unread: Vec<u8>,
    options: DriverOptions,
}

impl<Rt: Runtime, Rd: ReadBytes, Wr: WriteBytes> Launch<Rt, Rd, Wr> {
    /// A launch over `reader`/`writer` with nothing read yet.
    pub(crate) fn new(rt: Rt, reader: Rd, writer: Wr, options: &AgentOptions) -> Launch<Rt, Rd, Wr> {
        Launch { epoch: rt.now(), rt, reader, writer, unread: Vec::new(), options: options.driver() }
    }

    /// A fresh agent connection of version `P`.
    pub(crate) fn connection<P: Version>(&self) -> Connection<role::Agent, P> {
        Connection::new(self.options.config.clone(), Instant::ZERO)
    }

    fn driver<P: Version, H: Handlers<P, role::Agent>>(
        self,
        conn: Connection<role::Agent, P>,
        handlers: H,
    ) -> Driver<P, role::Agent, Rt, H, Rd, Wr> {
        let Launch { rt, epoch, reader, writer, unread, options } = self;
        Driver::serving(rt, epoch, conn, handlers, (reader, writer), options, &unread)
    }

    /// Runs the driver of `conn` in this future (its handlers on the runtime): until the
    /// client's input ends and every answer owed went out.
    pub(crate) async fn run<P: Version, H: Handlers<P, role::Agent>>(
        self,
        conn: Connection<role::Agent, P>,
        handlers: H,
    ) -> Result<(), Error> {
        self.driver(conn, handlers).await
    }

    /// [`run`](Self::run) on a task of its own (so a multi-thread runtime runs it beside its
    /// handlers); dropping this future closes the connection.
    pub(crate) async fn spawn<P: Version, H: Handlers<P, role::Agent> + Send>(
        self,
        conn: Connection<role::Agent, P>,
        handlers: H,
    ) -> Result<(), Error>
    where
        Rd: Send,
        Wr: Send,
    {
        let rt = self.rt.clone();
        let mut driver = self.driver(conn, handlers);
        let (_stop, stop) = oneshot::channel();
        driver.stop_with(stop);
        let (done, result) = oneshot::channel();
        rt.spawn(async move {
            let _ = done.send(driver.await);
        });
        result.await.unwrap_or(Err(Error::ConnectionClosed))
    }

    /// [`run`](Self::run) on a new connection of the handlers' version.
    pub(crate) async fn run_new<P: Version, H: Handlers<P, role::Agent>>(self, handlers: H) -> Result<(), Error> {
        let conn = self.connection::<P>();
        self.run(conn, handlers).await
    }

    /// [`spawn`](Self::spawn) on a new connection of the handlers' version.
    pub(crate) async fn spawn_new<P: Version, H: Handlers<P, role::Agent> + Send>(
        self,
        handlers: H,
    ) -> Result<(), Error>
    where
        Rd: Send,
        Wr: Send,
    {
        let conn = self.connection::<P>();
        self.spawn(conn, handlers).await
    }
}

/// The branch point of an agent that reads the client's `initialize` before it knows the
/// version (feature `unstable_protocol_v2`).
#[cfg(feature = "unstable_protocol_v2")]
mod accept {
    use std::io;

    use acp_proto::protocol::{V1, V2};
    use acp_proto::role;
    use acp_proto::types::ProtocolVersion;
    use acp_proto::{Accepted, Acceptor, Instant};
    use tokio::sync::oneshot;

    use super::Launch;
    use crate::Error;
    use crate::context::HandlerContext;
    use crate::driver::Handlers;
    use crate::handle::Done;
    use crate::io::{ReadBytes, WriteBytes};
    use crate::runtime::Runtime;
    use crate::sync::QueueReceiver;
    use crate::version::Inbound;

    impl<Rt: Runtime, Rd: ReadBytes, Wr: WriteBytes> Launch<Rt, Rd, Wr> {
        /// Reads the client's `initialize` ([`accept`](Self::accept)), then runs the driver of
        /// the version it offered in this future: with `v2` for a v2 client, `v1` for a v1 one.
        pub(crate) async fn run_accepted(
            mut self,
            v2: impl Handlers<V2, role::Agent>,
            v1: impl Handlers<V1, role::Agent>,
        ) -> Result<(), Error> {
            match self.accept().await? {
                Accepted::V2(conn) => self.run(conn, v2).await,
                Accepted::V1(conn) => self.run(conn, v1).await,
                _ => Err(Error::ConnectionClosed),
            }
        }

        /// [`run_accepted`](Self::run_accepted) with the driver on a task of its own.
        pub(crate) async fn spawn_accepted(
            mut self,
            v2: impl Handlers<V2, role::Agent> + Send,
            v1: impl Handlers<V1, role::Agent> + Send,
        ) -> Result<(), Error>
        where
            Rd: Send,
            Wr: Send,
        {
            match self.accept().await? {
                Accepted::V2(conn) => self.spawn(conn, v2).await,
                Accepted::V1(conn) => self.spawn(conn, v1).await,
                _ => Err(Error::ConnectionClosed),
            }
        }

        /// Reads the client's input into an [`Acceptor`] until it picks the version (or the input
        /// ends), writing what it answers meanwhile; the bytes read past the `initialize` stay
        /// for the driver.
        async fn accept(&mut self) -> Result<acp_proto::Accepted, Error> {
            let mut acceptor = Acceptor::new(self.options.config.clone(), Instant::ZERO);
            let mut buf = vec![0; self.options.read_buffer.max(1)];
            let mut out = Vec::new();
            while !acceptor.is_decided() {
                let now = Instant::from_std(self.epoch, self.rt.now());
                if !self.unread.is_empty() {
                    let consumed = acceptor.handle_input(now, &self.unread);
                    self.unread.drain(..consumed);
                    let _ = acceptor.poll_transmit(&mut out);
                    self.write_all(&out).await?;
                    out.clear();
                    if acceptor.is_decided() {
                        break;
                    }
                    if !self.unread.is_empty() {
                        // Before `initialize` nothing is dispatched, so the acceptor takes every
                        // byte once its answers went out; one that does not is given up on rather
                        // than read without bound.
                        return Err(Error::ConnectionClosed);
                    }
                }
                let n = std::future::poll_fn(|cx| self.reader.poll_read_bytes(cx, &mut buf)).await;
                match n {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(Error::Io(e)),
                    Ok(0) => {
                        acceptor.handle_eof(Instant::from_std(self.epoch, self.rt.now()));
                        break;
                    }
                    Ok(n) => self.unread.extend_from_slice(&buf[..n]),
                }
            }
            let _ = acceptor.poll_transmit(&mut out);
            self.write_all(&out).await?;
            match acceptor.accept() {
                Ok(accepted) => Ok(accepted),
                // Decided, or at the end of input: the acceptor always accepts then.
                Err(_) => Err(Error::ConnectionClosed),
            }
        }

        async fn write_all(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
            if bytes.is_empty() {
                return Ok(());
            }
            while !bytes.is_empty() {
                let n = std::future::poll_fn(|cx| self.writer.poll_write_bytes(cx, bytes)).await?;
                if n == 0 {
                    return Err(Error::Io(io::ErrorKind::WriteZero.into()));
                }
                bytes = &bytes[n..];
            }
            std::future::poll_fn(|cx| self.writer.poll_flush_bytes(cx)).await?;
            Ok(())
        }
    }

    /// The handlers of the version a v2-only agent does not speak (its v1 connection): the
    /// client's `initialize` offering 1 is answered `-32022` (unsupported protocol version, with
    /// `{requested: 1, supported: [2]}`), any other request `-32601`
    /// ([`Acceptor::refusal`]); notifications are dropped.
    pub(crate) struct Unspoken;

    impl Handlers<V1, role::Agent> for Unspoken {
        fn spawn_request<Rt: Runtime>(
            &self,
            _: &Rt,
            request: acp_proto::InboundRequest,
            _: HandlerContext<V1, role::Agent>,
            done: Done<V1, role::Agent>,
            _: Option<oneshot::Receiver<()>>,
        ) {
            let refusal = Acceptor::refusal(request.request(), &[ProtocolVersion::V2]);
            done.complete(acp_proto::Answer::error(request.id(), refusal));
        }

        fn spawn_notifications<Rt: Runtime>(&self, _: &Rt, _: QueueReceiver<Inbound<V1>>) {}
    }
}

#[cfg(feature = "unstable_protocol_v2")]
pub(crate) use accept::Unspoken;
