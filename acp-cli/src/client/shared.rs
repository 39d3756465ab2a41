//! `acp client --connect URL --attach SESSION [--observe]`: joins a session another client
//! holds on an `acp serve --share` server (the draft RFD "multi-client session attach"), as a
//! controller (prompts, cancels, answers permission asks: the first answer wins) or an
//! observer (watches).
//!
//! The bridge thread puts a shim between the connection and the link, which lets the
//! connection's `initialize` through, then sends `session/attach` and keeps its answer
//! (`acp_proto::attach::Attacher` says what is what; nothing here reads ACP): the session
//! then goes on as if this client had opened it. Nothing of it is recorded in the session
//! database (the session is the host's).

use std::sync::{Arc, Mutex};

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::attach::{AttachAnswer, Attacher, Linked, Role};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

/// What `--attach` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attach {
    /// The session's id (as its host's client shows it: `session ID · cwd …`).
    pub session: String,
    /// `--observe`: watch only.
    pub observe: bool,
}

/// Where the answer to `session/attach` is told.
pub(crate) type Answered = std::sync::mpsc::SyncSender<Result<AttachAnswer, RpcError>>;

/// Pumps between the connection's socket (`core`) and the link's (`link`) until both ends
/// closed, attaching `attach` on the way.
pub(crate) async fn shim(core: UnixStream, link: UnixStream, attach: Attach, answered: Answered) {
    let role = if attach.observe { Role::Observer } else { Role::Controller };
    let attacher = Arc::new(Mutex::new(Attacher::new(attach.session, role)));
    let (core_read, mut core_write) = core.into_split();
    let (link_read, link_write) = link.into_split();
    let link_write = Arc::new(tokio::sync::Mutex::new(link_write));
    let outbound = {
        let (attacher, link_write) = (attacher.clone(), link_write.clone());
        async move {
            let mut lines = BufReader::new(core_read);
            let mut line = Vec::new();
            while matches!(lines.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
                lock(&attacher).from_core(&line);
                if link_write.lock().await.write_all(&line).await.is_err() {
                    break;
                }
                line.clear();
            }
            let _ = link_write.lock().await.shutdown().await;
        }
    };
    let inbound = async move {
        let mut lines = BufReader::new(link_read);
        let mut line = Vec::new();
        while matches!(lines.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            let linked = lock(&attacher).from_link(&line);
            let delivered = match linked {
                Linked::Forward => write(&mut core_write, &line).await,
                Linked::ForwardThenSend(request) => {
                    let forwarded = write(&mut core_write, &line).await;
                    let mut link = link_write.lock().await;
                    forwarded && write(&mut *link, &request).await && link.write_all(b"\n").await.is_ok()
                }
                Linked::Answered(answer) => {
                    let _ = answered.try_send(answer);
                    true
                }
            };
            if !delivered {
                break;
            }
            line.clear();
        }
        let _ = core_write.shutdown().await;
    };
    tokio::join!(outbound, inbound);
}

fn lock(attacher: &Mutex<Attacher>) -> std::sync::MutexGuard<'_, Attacher> {
    attacher.lock().unwrap_or_else(|e| e.into_inner())
}

async fn write(writer: &mut (impl AsyncWrite + Unpin), bytes: &[u8]) -> bool {
    writer.write_all(bytes).await.is_ok() && writer.flush().await.is_ok()
}
