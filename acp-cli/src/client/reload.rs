//! `--connect` when the connection could not be resumed (the server no longer had it, or the
//! network stayed down past the link's tries; feature `unstable_resumable_transport`): in the
//! interactive loop, the client connects again and reopens its session from the agent, as the
//! draft RFD's fallback says: `session/resume` when the agent advertised it, else
//! `session/load`, whose replayed history is not drawn again (it is on the screen already).
//! The turn that was running is lost, and the user is told so. An agent that advertised
//! neither, or a server that cannot be reached, ends the client as before.

use std::sync::Arc;

use super::config::ClientConfig;
use super::handler::CliClient;
use super::link::Link;
use super::process::AgentProcess;
use super::render::Renderer;

/// Opens a new connection to the remote agent (reporting why not, on `None`).
pub(crate) type Redial = Box<dyn FnMut(&mut Renderer) -> Option<(Arc<dyn Link>, AgentProcess)>>;

/// Connects to `config.connect` again with a client `client` makes, as the first connection
/// did (without `--record`: its tap is the first connection's).
pub(crate) fn redial(config: ClientConfig, client: impl Fn() -> CliClient + 'static) -> Redial {
    Box::new(move |render| {
        let url = config.connect.as_deref()?;
        let (link, io) = super::remote::connect_remote(url, &config, render)?;
        match super::link::open(config.protocol, client(), Box::new(io.reader), Box::new(io.writer)) {
            Ok(conn) => Some((conn, AgentProcess::remote(link))),
            Err(e) => {
                render.error(&format!("could not start the connection: {e}"));
                None
            }
        }
    })
}
