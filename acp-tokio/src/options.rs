//! Settings of agent and client connections.

use std::time::Duration;

use acp_proto::Config;

use crate::driver::{
    DEFAULT_BUDGET, DEFAULT_CLOSE_GRACE, DEFAULT_NOTIFICATION_BUFFER, DEFAULT_READ_BUFFER, DriverOptions,
};

/// Settings of an agent connection ([`serve`](crate::serve) and friends).
///
/// ```
/// let mut options = acp_tokio::AgentOptions::default();
/// options.config.max_inbound = 64; // at most 64 handlers run at once
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentOptions {
    /// The core's limits and timings. `max_inbound` bounds how many request handlers run at
    /// once; `outbound_budget` is the byte budget behind `send_update(..).await`'s backpressure.
    pub config: Config,
    /// Size of the driver's read buffer. Default 64 KiB.
    pub read_buffer_size: usize,
    /// Rounds of work the driver does per poll before it yields to other tasks. Default 32.
    pub budget: u32,
    /// Inbound notifications waiting for their handler before input stops being read.
    /// Default 256.
    pub notification_buffer: usize,
    /// Feature `tracing`: put each frame's text in the frame events (off: only lengths).
    pub trace_payloads: bool,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            config: Config::default(),
            read_buffer_size: DEFAULT_READ_BUFFER,
            budget: DEFAULT_BUDGET,
            notification_buffer: DEFAULT_NOTIFICATION_BUFFER,
            trace_payloads: false,
        }
    }
}

impl AgentOptions {
    pub(crate) fn driver(&self) -> DriverOptions {
        driver_options(&self.config, self.read_buffer_size, self.budget, self.notification_buffer, self.trace_payloads)
    }
}

/// Settings of a client connection ([`ClientConnection`](crate::ClientConnection)).
///
/// ```
/// let mut options = acp_tokio::ClientOptions::default();
/// options.config.request_timeout = Some(std::time::Duration::from_secs(30));
/// options.close_grace = std::time::Duration::from_millis(500);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// The core's limits and timings (`request_timeout` is the default deadline of every
    /// request).
    pub config: Config,
    /// Size of the driver's read buffer. Default 64 KiB.
    pub read_buffer_size: usize,
    /// Rounds of work the driver does per poll before it yields. Default 32.
    pub budget: u32,
    /// Updates a prompt turn buffers for its consumer; when it is full the driver stops reading
    /// until the consumer catches up. Default 512.
    pub turn_buffer: usize,
    /// Inbound notifications waiting for [`Client::session_update`](crate::Client::session_update)
    /// and friends. Default 256.
    pub notification_buffer: usize,
    /// Child processes: how long [`close`](crate::ClientConnection::close) waits after closing
    /// the agent's stdin before it signals the process group (`SIGTERM`). Default 1 s.
    pub close_grace: Duration,
    /// Child processes: how long after `SIGTERM` the process group gets `SIGKILL`. Default 1 s.
    pub kill_grace: Duration,
    /// Child processes: bytes of the agent's stderr kept (the most recent). Default 64 KiB.
    pub stderr_buffer: usize,
    /// Feature `tracing`: put each frame's text in the frame events (off: only lengths).
    pub trace_payloads: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            config: Config::default(),
            read_buffer_size: DEFAULT_READ_BUFFER,
            budget: DEFAULT_BUDGET,
            turn_buffer: 512,
            notification_buffer: DEFAULT_NOTIFICATION_BUFFER,
            close_grace: DEFAULT_CLOSE_GRACE,
            kill_grace: DEFAULT_CLOSE_GRACE,
            stderr_buffer: 64 * 1024,
            trace_payloads: false,
        }
    }
}

impl ClientOptions {
    pub(crate) fn driver(&self) -> DriverOptions {
        driver_options(&self.config, self.read_buffer_size, self.budget, self.notification_buffer, self.trace_payloads)
    }
}

/// The driver's settings, from the fields [`AgentOptions`] and [`ClientOptions`] share.
fn driver_options(
    config: &Config,
    read_buffer: usize,
    budget: u32,
    notification_buffer: usize,
    trace: bool,
) -> DriverOptions {
    DriverOptions { config: config.clone(), read_buffer, budget, notification_buffer, trace_payloads: trace }
}
