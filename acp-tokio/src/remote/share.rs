//! Sessions shared by several clients (feature `unstable_session_attach`, on with
//! [`WsServerOptions::share_sessions`](super::WsServerOptions::share_sessions)): a client of
//! another connection attaches to a live session with `session/attach`, as an observer or a
//! controller (the draft RFD "multi-client session attach"; the rules are
//! `acp_proto::attach`'s, nothing here reads ACP).
//!
//! Each connection's [`Endpoint`] is wrapped in a relay task that sits between the transport
//! and the backend's lines and plays both roles of the core's attach module: the **host** of
//! the sessions its agent announced (its [`Hub`] routes the agent's, the client's and the
//! guests' frames) and the **guest** of the sessions its client attached elsewhere (its
//! [`Guest`] routes the client's frames). A registry shared by the server maps each announced
//! session to its host's relay.
//!
//! * **Credential.** Only a caller with the credential that opened the host connection (the
//!   same bearer token and TLS client certificate, see `auth.rs`) may attach; anyone else gets
//!   the answer for an unknown session. Without tokens every caller is the same: a server
//!   without tokens listens on loopback (as `acp serve` does) or must not share.
//! * **Bounds.** What a host hands a guest goes through a channel of [`GUEST_QUEUE`] frames:
//!   a guest that does not keep up is detached (its client stops getting the session's
//!   updates) instead of holding the host up. What a guest sends a host waits for room in the
//!   host's channel ([`HOST_QUEUE`]), which holds up that guest alone.
//! * **Lifetime.** When the host connection ends, its sessions leave the registry; a guest's
//!   next request for one (and any still queued for the host) is answered "session not
//!   found". A guest's message waits at most [`HOST_PATIENCE`] for room in its host's
//!   channel; then a request is answered `-32603` (the host is not keeping up).

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use acp_proto::attach::{AttachRequest, Guest, GuestId, Hub, Out, Route, To};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::BRIDGE_BUFFER;
use super::auth::Caller;
use super::line::read_line;
use super::server::{BoxFuture, Endpoint};

/// Frames a host holds for one guest before the guest is detached.
pub(crate) const GUEST_QUEUE: usize = 1024;
/// Messages for one host's relay waiting for it.
pub(crate) const HOST_QUEUE: usize = 64;
/// How long a guest's message waits for room in its host's channel; then a request is
/// answered `-32603` and anything else dropped.
const HOST_PATIENCE: Duration = Duration::from_secs(10);
/// Lines read ahead from each side of a relay.
const READ_AHEAD: usize = 16;

/// The sessions the server's connections host, by credential and session id (agent
/// processes of different connections may well name their sessions alike).
#[derive(Default)]
pub(crate) struct Registry {
    hosts: Mutex<HashMap<(Caller, Arc<str>), Host>>,
    guests: AtomicU64,
}

/// A host's relay, as guests reach it.
#[derive(Clone)]
struct Host {
    connection: Arc<str>,
    caller: Caller,
    tx: mpsc::Sender<ToHost>,
}

/// What a guest's relay tells a host's.
enum ToHost {
    Join { guest: GuestId, request: AttachRequest, deliver: mpsc::Sender<Delivery> },
    Frame { guest: GuestId, session: Arc<str>, frame: Vec<u8>, deliver: mpsc::Sender<Delivery> },
    Leave { guest: GuestId },
}

/// A frame a host sends a guest's client, and the session it is of.
struct Delivery {
    session: Arc<str>,
    frame: Vec<u8>,
}

impl Registry {
    /// The host of `caller`'s `session`: the latest connection of that credential whose
    /// agent announced it.
    fn host(&self, caller: &Caller, session: &Arc<str>) -> Option<Host> {
        self.hosts.lock().unwrap_or_else(|e| e.into_inner()).get(&(caller.clone(), session.clone())).cloned()
    }

    fn register(&self, session: Arc<str>, host: Host) {
        let key = (host.caller.clone(), session);
        self.hosts.lock().unwrap_or_else(|e| e.into_inner()).insert(key, host);
    }

    /// Forgets every session `connection` hosts.
    fn forget(&self, connection: &str) {
        self.hosts.lock().unwrap_or_else(|e| e.into_inner()).retain(|_, host| &*host.connection != connection);
    }
}

/// `inner` with a relay between it and the transport (see the module docs).
pub(crate) fn wrap(
    registry: Arc<Registry>,
    connection: &str,
    caller: Caller,
    max_message: usize,
    inner: Endpoint,
) -> Endpoint {
    let (ours, theirs) = tokio::io::duplex(BRIDGE_BUFFER);
    let (client_in, client_out) = tokio::io::split(ours);
    let guest_id = registry.guests.fetch_add(1, Ordering::Relaxed) + 1;
    let (host_tx, host_rx) = mpsc::channel(HOST_QUEUE);
    let (deliver_tx, deliver_rx) = mpsc::channel(GUEST_QUEUE);
    let relay = Relay {
        registry,
        connection: connection.into(),
        caller,
        guest_id,
        hub: Hub::new(),
        guest: Guest::new(),
        host_tx,
        deliver_tx,
        guests: HashMap::new(),
        client_out: Box::new(client_out),
        agent_in: Some(inner.writer),
    };
    let client_lines = lines(client_in, max_message);
    let agent_lines = lines(inner.reader, max_message);
    let task = tokio::spawn(relay.run(client_lines, agent_lines, host_rx, deliver_rx));
    let inner_finish = inner.finish;
    let (reader, writer) = tokio::io::split(theirs);
    let finish: BoxFuture<'static, ()> = Box::pin(async move {
        let _ = task.await;
        inner_finish.await;
    });
    Endpoint { reader: Box::new(reader), writer: Box::new(writer), finish }
}

/// The lines of `reader`, read ahead by a task of their own (a select cannot cancel a
/// half-read line).
fn lines(reader: impl AsyncRead + Send + Unpin + 'static, max: usize) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel(READ_AHEAD);
    tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        let mut line = Vec::new();
        while let Ok(true) = read_line(&mut reader, &mut line, max).await {
            if tx.send(std::mem::take(&mut line)).await.is_err() {
                break;
            }
        }
    });
    rx
}

/// One connection's relay.
struct Relay {
    registry: Arc<Registry>,
    connection: Arc<str>,
    caller: Caller,
    guest_id: GuestId,
    hub: Hub,
    guest: Guest,
    /// Given to guests (through the registry) to reach this relay as a host.
    host_tx: mpsc::Sender<ToHost>,
    /// Given to hosts to reach this relay's client as a guest.
    deliver_tx: mpsc::Sender<Delivery>,
    /// The guests attached here: the session each attached and where its frames go.
    guests: HashMap<GuestId, (Arc<str>, mpsc::Sender<Delivery>)>,
    client_out: Box<dyn AsyncWrite + Send + Unpin>,
    /// `None` once the client's side ended (the agent's input is closed).
    agent_in: Option<Box<dyn AsyncWrite + Send + Unpin>>,
}

impl Relay {
    async fn run(
        mut self,
        mut client: mpsc::Receiver<Vec<u8>>,
        mut agent: mpsc::Receiver<Vec<u8>>,
        mut host_rx: mpsc::Receiver<ToHost>,
        mut deliver_rx: mpsc::Receiver<Delivery>,
    ) {
        let mut out = Vec::new();
        let mut client_open = true;
        loop {
            let step = tokio::select! {
                line = client.recv(), if client_open => match line {
                    Some(line) => self.client_line(line, &mut out).await,
                    None => {
                        // The client is gone: the agent's input ends (shut down, not only
                        // dropped: half of an in-memory pipe does not close it).
                        client_open = false;
                        self.leave_all();
                        if let Some(mut agent_in) = self.agent_in.take() {
                            let _ = agent_in.shutdown().await;
                        }
                        Ok(())
                    }
                },
                line = agent.recv() => match line {
                    Some(line) => {
                        if let Some(session) = self.hub.from_agent(&line, &mut out) {
                            let host = Host { connection: self.connection.clone(), caller: self.caller.clone(), tx: self.host_tx.clone() };
                            self.registry.register(session, host);
                        }
                        Ok(())
                    }
                    None => break,
                },
                Some(message) = host_rx.recv() => {
                    self.as_host(message, &mut out);
                    Ok(())
                }
                Some(delivery) = deliver_rx.recv() => {
                    self.guest.from_host(&delivery.session, &delivery.frame);
                    write_line(&mut self.client_out, &delivery.frame).await
                }
            };
            if step.is_err() || self.flush(&mut out).await.is_err() {
                break;
            }
        }
        self.registry.forget(&self.connection);
        self.leave_all();
        // What guests sent meanwhile is answered: nothing is found here any more.
        self.hub.close();
        self.guests.clear();
        host_rx.close();
        while let Ok(message) = host_rx.try_recv() {
            self.as_host(message, &mut out);
        }
        let _ = self.client_out.shutdown().await;
    }

    /// A line of this connection's client.
    async fn client_line(&mut self, line: Vec<u8>, out: &mut Vec<Out>) -> io::Result<()> {
        match self.guest.from_client(&line) {
            Route::Local => self.hub.from_host(&line, out),
            Route::Answer(frame) => write_line(&mut self.client_out, &frame).await?,
            Route::Host(session) => {
                let Some(host) = self.registry.host(&self.caller, &session) else {
                    if let Some(answer) = self.guest.host_gone(&session, &line) {
                        write_line(&mut self.client_out, &answer).await?;
                    }
                    return Ok(());
                };
                let deliver = self.deliver_tx.clone();
                let frame =
                    ToHost::Frame { guest: self.guest_id, session: session.clone(), frame: line.clone(), deliver };
                let answer = match tokio::time::timeout(HOST_PATIENCE, host.tx.send(frame)).await {
                    Ok(Ok(())) => None,
                    Ok(Err(_)) => self.guest.host_gone(&session, &line),
                    Err(_) => self.guest.busy(&line),
                };
                if let Some(answer) = answer {
                    write_line(&mut self.client_out, &answer).await?;
                }
            }
            Route::Attach(request) => {
                let host = self.registry.host(&self.caller, &request.session);
                let joined = match host {
                    Some(host) if *host.connection != *self.connection => {
                        let join = ToHost::Join {
                            guest: self.guest_id,
                            request: request.clone(),
                            deliver: self.deliver_tx.clone(),
                        };
                        host.tx.send(join).await.is_ok()
                    }
                    _ => false,
                };
                if !joined {
                    let answer = self.guest.refuse(&request);
                    write_line(&mut self.client_out, &answer).await?;
                }
            }
            Route::Detach { id, session } => {
                if let Some(host) = self.registry.host(&self.caller, &session) {
                    let _ = host.tx.send(ToHost::Leave { guest: self.guest_id }).await;
                }
                if let Some(answer) = self.guest.detached(&session, Some(&id)) {
                    write_line(&mut self.client_out, &answer).await?;
                }
            }
        }
        Ok(())
    }

    /// This client is gone: the hosts it attached let it go (a slot of each is free again).
    fn leave_all(&mut self) {
        let sessions: Vec<Arc<str>> = self.guest.sessions().map(Arc::from).collect();
        for session in sessions {
            if let Some(host) = self.registry.host(&self.caller, &session) {
                let _ = host.tx.try_send(ToHost::Leave { guest: self.guest_id });
            }
            self.guest.detached(&session, None);
        }
    }

    /// A guest's message to this relay as a host.
    fn as_host(&mut self, message: ToHost, out: &mut Vec<Out>) {
        match message {
            ToHost::Join { guest, request, deliver } => {
                let before = out.len();
                self.hub.join(guest, &request, out);
                if self.hub.guests().any(|g| g == guest) {
                    self.guests.insert(guest, (request.session.clone(), deliver));
                } else {
                    // Refused: the answer goes out, nothing is kept.
                    direct(out, before, guest, &request.session, &deliver);
                }
            }
            ToHost::Frame { guest, session, frame, deliver } => {
                let before = out.len();
                self.hub.from_guest(guest, &frame, out);
                if !self.guests.contains_key(&guest) {
                    // Not (or no longer) a guest here: its answer goes back all the same.
                    direct(out, before, guest, &session, &deliver);
                }
            }
            ToHost::Leave { guest } => {
                self.hub.leave(guest, out);
                self.guests.remove(&guest);
            }
        }
    }

    /// Delivers what the hub routed: the client and the agent are waited for, a guest that
    /// has no room is detached.
    async fn flush(&mut self, out: &mut Vec<Out>) -> io::Result<()> {
        for Out { to, frame } in out.drain(..) {
            match to {
                To::Host => write_line(&mut self.client_out, &frame).await?,
                To::Agent => {
                    if let Some(agent) = self.agent_in.as_mut()
                        && write_line(agent, &frame).await.is_err()
                    {
                        self.agent_in = None;
                    }
                }
                To::Guest(guest) => {
                    let Some((session, deliver)) = self.guests.get(&guest) else { continue };
                    let delivery = Delivery { session: session.clone(), frame };
                    if deliver.try_send(delivery).is_err() {
                        self.guests.remove(&guest);
                        self.hub.leave(guest, &mut Vec::new());
                    }
                }
            }
        }
        Ok(())
    }
}

/// Hands `guest` what the hub routed to it from `out[before..]`, through `deliver`.
fn direct(out: &mut Vec<Out>, before: usize, guest: GuestId, session: &Arc<str>, deliver: &mpsc::Sender<Delivery>) {
    let mut kept = Vec::new();
    for routed in out.drain(before..) {
        if routed.to == To::Guest(guest) {
            let _ = deliver.try_send(Delivery { session: session.clone(), frame: routed.frame });
        } else {
            kept.push(routed);
        }
    }
    out.extend(kept);
}

async fn write_line(writer: &mut (impl AsyncWrite + Unpin + ?Sized), frame: &[u8]) -> io::Result<()> {
    writer.write_all(frame).await?;
    writer.write_all(b"\n").await?;
    writer.flush().await
}
