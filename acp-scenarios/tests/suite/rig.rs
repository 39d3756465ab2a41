//! What a runtime provides to the scenarios ([`Runtime`]): running a scenario to its end, and a
//! client connected to an echo agent ([`Connected`]) over a Unix socket pair, whose agent end
//! the test can shut down (the agent's death). Plus the runtime-agnostic helpers: a sleep and
//! a hang guard on a timer thread, and a minimal executor for the blocking runtime.

use std::future::Future;
use std::os::unix::net::UnixStream;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;

use crate::conn::Conn;
use acp_scenarios::TestClient;
use acp_scenarios::blocking_echo::BlockingEcho;
use acp_scenarios::echo::EchoAgent;

/// No scenario takes anywhere near this long; past it, it is a hang and fails.
pub(crate) const HANG_GUARD: Duration = Duration::from_secs(60);

/// A runtime the suite runs on: both peers of a scenario run on it.
pub(crate) trait Runtime {
    /// Its client connection.
    type Conn: Conn;
    /// Runs `scenario` to completion; a scenario still running after [`HANG_GUARD`] fails.
    fn block_on(&self, scenario: impl Future<Output = ()>);
    /// An echo agent served on this runtime, and `client` connected to it. Called inside
    /// [`block_on`](Self::block_on).
    fn connect(&self, client: TestClient, limits: Limits) -> Connected<Self::Conn>;
}

/// The buffers and budgets of both peers.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limits {
    /// The adapters' defaults.
    Default,
    /// Small ones, for the backpressure scenario: a 64-update client buffer, a 16 KiB agent
    /// outbound budget, 32 KiB socket send buffers.
    Small,
}

impl Limits {
    pub(crate) const CLIENT_BUFFER: usize = 64;
    pub(crate) const OUTBOUND_BUDGET: usize = 16 * 1024;
    const SOCKET_BUFFER: usize = 32 * 1024;
}

/// A client connected to an echo agent, and what the test observes of both.
pub(crate) struct Connected<C> {
    pub(crate) conn: C,
    /// The client: its files, and the paths its read handler was asked for (`reads`).
    pub(crate) client: TestClient,
    /// What the client's handlers reported (`permission asked call-1`, ...).
    pub(crate) events: UnboundedReceiver<String>,
    /// What the agent's handlers observed (`cancelled _wait Some(CancelRequest)`, ...).
    pub(crate) observed: UnboundedReceiver<String>,
    /// How many `storm` updates the agent has sent so far.
    pub(crate) sent: Arc<AtomicU64>,
    /// A handle on the agent's end of the socket.
    agent_end: UnixStream,
}

impl<C> Connected<C> {
    /// The agent dies: its end of the socket is shut down both ways, so the client reads the
    /// end of its input and its writes fail, whatever the agent's handlers are doing.
    pub(crate) fn kill_agent(&self) {
        self.agent_end.shutdown(std::net::Shutdown::Both).expect("shutdown");
    }
}

/// The two ends of a connection and the peers, before the adapters take them.
pub(crate) struct Ends {
    pub(crate) client_end: UnixStream,
    pub(crate) agent_end: UnixStream,
    /// The echo agent of each adapter, reporting to the same [`Connected`]: pick yours.
    pub(crate) echo: EchoAgent,
    pub(crate) blocking_echo: BlockingEcho,
    /// The v2 echo agent (either adapter's: it implements both agent traits).
    #[cfg(feature = "unstable_protocol_v2")]
    pub(crate) echo_v2: acp_scenarios::v2::EchoV2,
    /// The client, reporting to the [`Connected`].
    pub(crate) client: TestClient,
}

/// A socket pair, and the agents and the client with their reports wired to the returned
/// [`Connected`] (whose connection the runtime then adds with [`Connected::with`]).
pub(crate) fn wire(mut client: TestClient, limits: Limits) -> (Ends, Connected<()>) {
    let (client_end, agent_end) = UnixStream::pair().expect("a socket pair");
    if limits == Limits::Small {
        for end in [&client_end, &agent_end] {
            rustix::net::sockopt::set_socket_send_buffer_size(end, Limits::SOCKET_BUFFER).expect("SO_SNDBUF");
        }
    }
    let (events_tx, events) = unbounded_channel();
    client.events = Some(events_tx);
    let (observed_tx, observed): (UnboundedSender<String>, _) = unbounded_channel();
    let sent = Arc::new(AtomicU64::new(0));
    let echo = EchoAgent { observed: Some(observed_tx.clone()), sent: sent.clone(), ..EchoAgent::default() };
    #[cfg(feature = "unstable_protocol_v2")]
    let echo_v2 = acp_scenarios::v2::EchoV2::reporting(Some(observed_tx.clone()), sent.clone());
    let blocking_echo = BlockingEcho { observed: Some(observed_tx), sent: sent.clone(), ..BlockingEcho::default() };
    let agent_handle = agent_end.try_clone().expect("a second handle on the agent's end");
    let connected = Connected { conn: (), client: client.clone(), events, observed, sent, agent_end: agent_handle };
    let ends = Ends {
        client_end,
        agent_end,
        echo,
        blocking_echo,
        #[cfg(feature = "unstable_protocol_v2")]
        echo_v2,
        client,
    };
    (ends, connected)
}

impl Connected<()> {
    /// With the client connection the runtime made of the ends.
    pub(crate) fn with<C>(self, conn: C) -> Connected<C> {
        let Connected { client, events, observed, sent, agent_end, .. } = self;
        Connected { conn, client, events, observed, sent, agent_end }
    }
}

/// Sleeps on any executor (a timer thread).
pub(crate) async fn sleep(duration: Duration) {
    let (tx, rx) = oneshot::channel();
    thread::spawn(move || {
        thread::sleep(duration);
        let _ = tx.send(());
    });
    let _ = rx.await;
}

/// `future`'s output, or a failure naming `what` if it takes longer than `limit` (a hang).
pub(crate) async fn guard<T>(limit: Duration, what: &str, future: impl Future<Output = T>) -> T {
    let mut future = pin!(future);
    let mut timer = pin!(sleep(limit));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            return Poll::Ready(output);
        }
        if timer.as_mut().poll(cx).is_ready() {
            panic!("{what}: not done after {limit:?}, a hang");
        }
        Poll::Pending
    })
    .await
}

/// Wakes the thread parked in [`block_on`].
struct Unpark(thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` on this thread, parking while it waits: the executor of the blocking runtime,
/// where every call runs on a thread of its own and only the scenario's script is async.
pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        thread::park();
    }
}
