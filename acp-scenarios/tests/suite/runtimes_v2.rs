//! The runtimes speaking v2 (feature `unstable_protocol_v2`): [`V2`] of a runtime runs the
//! scenarios on that runtime (its `block_on`), with both adapters' v2 client and v2 echo agent
//! ([`acp_scenarios::v2::EchoV2`]) in place of the v1 ones, over the same [`wire`].

use std::future::Future;
use std::os::unix::net::UnixStream;
use std::sync::Arc;

use acp_scenarios::TestClient;
use acp_scenarios::v2::EchoV2;
use acp_tokio::v2::ClientConnection;

use crate::conn_v2::BlockingConnV2;
use crate::local::{LocalEchoV2, LocalTestClient};
use crate::rig::{Connected, Limits, Runtime, wire};
use crate::runtimes::{
    Blocking, BlockingClientTokioAgent, TokioClientBlockingAgent, TokioLocalSet, TokioMultiThread, async_options,
    blocking_options, tokio_halves,
};

/// The runtime `R`, speaking v2.
pub(crate) struct V2<R>(pub(crate) R);

/// Serves the v2 echo agent on acp-blocking, on a thread of its own.
fn serve_blocking(agent: EchoV2, end: UnixStream, limits: Limits) {
    let writer = end.try_clone().expect("a second handle");
    let options = blocking_options(limits).1;
    std::thread::spawn(move || acp_blocking::v2::serve_with(agent, end, writer, options));
}

/// acp-blocking's v2 client on `end`.
fn connect_blocking(client: TestClient, end: UnixStream, limits: Limits) -> BlockingConnV2 {
    let writer = end.try_clone().expect("a second handle");
    let conn = acp_blocking::v2::ClientConnection::connect(client, end, writer, blocking_options(limits).0);
    BlockingConnV2(Arc::new(conn.expect("the blocking v2 client")))
}

impl Runtime for V2<TokioMultiThread> {
    type Conn = ClientConnection;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        self.0.block_on(scenario);
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<ClientConnection> {
        let (ends, connected) = wire(client, limits);
        let (client_options, agent_options) = async_options(limits);
        let (reader, writer) = tokio_halves(ends.agent_end);
        tokio::spawn(acp_tokio::v2::serve(ends.echo_v2, reader, writer, agent_options));
        let (reader, writer) = tokio_halves(ends.client_end);
        connected.with(ClientConnection::connect(ends.client, reader, writer, client_options))
    }
}

impl Runtime for V2<TokioLocalSet> {
    type Conn = ClientConnection;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        self.0.block_on(scenario);
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<ClientConnection> {
        let (ends, connected) = wire(client, limits);
        let (client_options, agent_options) = async_options(limits);
        let (reader, writer) = tokio_halves(ends.agent_end);
        let agent = LocalEchoV2::new(ends.echo_v2);
        tokio::task::spawn_local(acp_tokio::v2::serve_local(agent, reader, writer, agent_options));
        let (reader, writer) = tokio_halves(ends.client_end);
        let client = LocalTestClient::new(ends.client);
        connected.with(ClientConnection::connect_local(client, reader, writer, client_options))
    }
}

#[cfg(feature = "async-std")]
impl Runtime for V2<crate::runtimes::AsyncStd> {
    type Conn = ClientConnection;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        self.0.block_on(scenario);
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<ClientConnection> {
        use async_std::os::unix::net::UnixStream as AsyncStdStream;
        let (ends, connected) = wire(client, limits);
        let (client_options, agent_options) = async_options(limits);
        let agent_end = AsyncStdStream::from(ends.agent_end);
        let agent_writer = agent_end.clone();
        async_std::task::spawn(acp_tokio::async_std::v2::serve(ends.echo_v2, agent_end, agent_writer, agent_options));
        let client_end = AsyncStdStream::from(ends.client_end);
        let client_writer = client_end.clone();
        connected.with(acp_tokio::async_std::v2::connect(ends.client, client_end, client_writer, client_options))
    }
}

impl Runtime for V2<Blocking> {
    type Conn = BlockingConnV2;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        self.0.block_on(scenario);
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<BlockingConnV2> {
        let (ends, connected) = wire(client, limits);
        serve_blocking(ends.echo_v2, ends.agent_end, limits);
        connected.with(connect_blocking(ends.client, ends.client_end, limits))
    }
}

impl Runtime for V2<TokioClientBlockingAgent> {
    type Conn = ClientConnection;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        self.0.block_on(scenario);
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<ClientConnection> {
        let (ends, connected) = wire(client, limits);
        serve_blocking(ends.echo_v2, ends.agent_end, limits);
        let (reader, writer) = tokio_halves(ends.client_end);
        connected.with(ClientConnection::connect(ends.client, reader, writer, async_options(limits).0))
    }
}

impl Runtime for V2<BlockingClientTokioAgent> {
    type Conn = BlockingConnV2;

    fn block_on(&self, scenario: impl Future<Output = ()>) {
        self.0.block_on(scenario);
    }

    fn connect(&self, client: TestClient, limits: Limits) -> Connected<BlockingConnV2> {
        let (ends, connected) = wire(client, limits);
        let (agent, agent_end, options) = (ends.echo_v2, ends.agent_end, async_options(limits).1);
        self.0.0.spawn(async move {
            let (reader, writer) = tokio_halves(agent_end);
            acp_tokio::v2::serve(agent, reader, writer, options).await
        });
        connected.with(connect_blocking(ends.client, ends.client_end, limits))
    }
}
