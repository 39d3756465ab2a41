//! The runtimes: each connects a client of its adapter to an echo agent of its adapter, both
//! running on it, over a Unix socket pair.

use std::future::Future;
use std::os::unix::net::UnixStream;
use std::sync::Arc;

use acp_tokio::{AgentOptions, ClientConnection, ClientOptions};

use crate::conn::BlockingConn;
use crate::local::{LocalEcho, LocalTestClient};
use crate::rig::{self, Connected, HANG_GUARD, Limits, Runtime, wire};
use acp_scenarios::TestClient;
use acp_scenarios::blocking_echo::BlockingEcho;

/// acp-tokio's options for `limits` (its async-std flavour takes the same).
pub(crate) fn async_options(limits: Limits) -> (ClientOptions, AgentOptions) {
    let (mut client, mut agent) = (ClientOptions::default(), AgentOptions::default());
    if limits == Limits::Small {
        client.turn_buffer = Limits::CLIENT_BUFFER;
        agent.config.outbound_budget = Limits::OUTBOUND_BUDGET;
    }
    (client, agent)
}

/// An end as a tokio socket, split (inside a runtime).
pub(crate) fn tokio_halves(end: UnixStream) -> (tokio::net::unix::OwnedReadHalf, tokio::net::unix::OwnedWriteHalf) {
    end.set_nonblocking(true).expect("non-blocking");
    tokio::net::UnixStream::from_std(end).expect("a tokio socket").into_split()
}

/// acp-tokio on a multi-thread runtime (two workers): `Agent` and `Client` handlers (`Send`)
/// as spawned tasks.
pub(crate) struct TokioMultiThread(pub(crate) tokio::runtime::Runtime);

impl TokioMultiThread {
    pub(crate) fn new() -> TokioMultiThread {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build();
        TokioMultiThread(runtime.expect("a runtime"))
    }
}

impl Runtime for TokioMultiThread {
    type Conn = ClientConnection;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        self.0.block_on(rig::guard(HANG_GUARD, "the scenario", scenario));
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<ClientConnection> {
        let (ends, connected) = wire(client, limits);
        let (client_options, agent_options) = async_options(limits);
        let (reader, writer) = tokio_halves(ends.agent_end);
        tokio::spawn(acp_tokio::serve(ends.echo, reader, writer, agent_options));
        let (reader, writer) = tokio_halves(ends.client_end);
        connected.with(ClientConnection::connect(ends.client, reader, writer, client_options))
    }
}

/// acp-tokio on a current-thread runtime in a `LocalSet`: `LocalAgent` and `LocalClient`
/// handlers (`!Send`) as local tasks.
pub(crate) struct TokioLocalSet(pub(crate) tokio::runtime::Runtime, pub(crate) tokio::task::LocalSet);

impl TokioLocalSet {
    pub(crate) fn new() -> TokioLocalSet {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        TokioLocalSet(runtime.expect("a runtime"), tokio::task::LocalSet::new())
    }
}

impl Runtime for TokioLocalSet {
    type Conn = ClientConnection;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        self.1.block_on(&self.0, rig::guard(HANG_GUARD, "the scenario", scenario));
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<ClientConnection> {
        let (ends, connected) = wire(client, limits);
        let (client_options, agent_options) = async_options(limits);
        let (reader, writer) = tokio_halves(ends.agent_end);
        tokio::task::spawn_local(acp_tokio::serve_local(LocalEcho::new(ends.echo), reader, writer, agent_options));
        let (reader, writer) = tokio_halves(ends.client_end);
        let client = LocalTestClient::new(ends.client);
        connected.with(ClientConnection::connect_local(client, reader, writer, client_options))
    }
}

/// acp-tokio's driver on async-std (feature `async-std`): `Send` handlers as async-std tasks.
#[cfg(feature = "async-std")]
pub(crate) struct AsyncStd;

#[cfg(feature = "async-std")]
impl Runtime for AsyncStd {
    type Conn = ClientConnection;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        async_std::task::block_on(rig::guard(HANG_GUARD, "the scenario", scenario));
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<ClientConnection> {
        use async_std::os::unix::net::UnixStream as AsyncStdStream;
        let (ends, connected) = wire(client, limits);
        let (client_options, agent_options) = async_options(limits);
        let agent_end = AsyncStdStream::from(ends.agent_end);
        let agent_writer = agent_end.clone();
        async_std::task::spawn(acp_tokio::async_std::serve(ends.echo, agent_end, agent_writer, agent_options));
        let client_end = AsyncStdStream::from(ends.client_end);
        let client_writer = client_end.clone();
        connected.with(acp_tokio::async_std::connect(ends.client, client_end, client_writer, client_options))
    }
}

/// acp-blocking's options for `limits`.
pub(crate) fn blocking_options(limits: Limits) -> (acp_blocking::ClientOptions, acp_blocking::AgentOptions) {
    let (mut client, mut agent) = (acp_blocking::ClientOptions::default(), acp_blocking::AgentOptions::default());
    if limits == Limits::Small {
        client.max_buffered = Limits::CLIENT_BUFFER;
        agent.config.outbound_budget = Limits::OUTBOUND_BUDGET;
    }
    (client, agent)
}

/// Serves the blocking echo agent on a thread of its own.
fn serve_blocking(agent: BlockingEcho, end: UnixStream, limits: Limits) {
    let writer = end.try_clone().expect("a second handle");
    let options = blocking_options(limits).1;
    std::thread::spawn(move || acp_blocking::serve_with(agent, end, writer, options));
}

/// A blocking client on `end`.
fn connect_blocking(client: TestClient, end: UnixStream, limits: Limits) -> BlockingConn {
    let writer = end.try_clone().expect("a second handle");
    let conn = acp_blocking::ClientConnection::connect(client, end, writer, blocking_options(limits).0);
    BlockingConn(Arc::new(conn.expect("the blocking client")))
}

/// acp-blocking: the agent serves on a thread, the client's calls block their threads; the
/// scenario's script waits for them on a minimal executor ([`rig::block_on`]).
pub(crate) struct Blocking;

impl Runtime for Blocking {
    type Conn = BlockingConn;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        rig::block_on(rig::guard(HANG_GUARD, "the scenario", scenario));
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<BlockingConn> {
        let (ends, connected) = wire(client, limits);
        serve_blocking(ends.blocking_echo, ends.agent_end, limits);
        connected.with(connect_blocking(ends.client, ends.client_end, limits))
    }
}

/// Across the adapters: acp-tokio's client (multi-thread runtime) and acp-blocking's agent.
pub(crate) struct TokioClientBlockingAgent(TokioMultiThread);

impl TokioClientBlockingAgent {
    pub(crate) fn new() -> TokioClientBlockingAgent {
        TokioClientBlockingAgent(TokioMultiThread::new())
    }
}

impl Runtime for TokioClientBlockingAgent {
    type Conn = ClientConnection;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        self.0.block_on(scenario);
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<ClientConnection> {
        let (ends, connected) = wire(client, limits);
        serve_blocking(ends.blocking_echo, ends.agent_end, limits);
        let (reader, writer) = tokio_halves(ends.client_end);
        connected.with(ClientConnection::connect(ends.client, reader, writer, async_options(limits).0))
    }
}

/// Across the adapters: acp-blocking's client and acp-tokio's agent (on a multi-thread runtime
/// of its own).
pub(crate) struct BlockingClientTokioAgent(pub(crate) tokio::runtime::Runtime);

impl BlockingClientTokioAgent {
    pub(crate) fn new() -> BlockingClientTokioAgent {
        BlockingClientTokioAgent(TokioMultiThread::new().0)
    }
}

impl Runtime for BlockingClientTokioAgent {
    type Conn = BlockingConn;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        rig::block_on(rig::guard(HANG_GUARD, "the scenario", scenario));
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<BlockingConn> {
        let (ends, connected) = wire(client, limits);
        let (agent, agent_end, options) = (ends.echo, ends.agent_end, async_options(limits).1);
        self.0.spawn(async move {
            let (reader, writer) = tokio_halves(agent_end);
            acp_tokio::serve(agent, reader, writer, options).await
        });
        connected.with(connect_blocking(ends.client, ends.client_end, limits))
    }
}
