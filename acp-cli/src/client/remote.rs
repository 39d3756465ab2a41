//! `acp client --connect URL`: the agent is remote, behind a WebSocket (`ws://…`, or `wss://…`
//! with TLS trusting the platform's roots or only the CAs of `--ca-file`) or Streamable HTTP
//! (`http://…`, or `https://…` with the same TLS; HTTP/2 when the server picks it by ALPN), the two profiles of the RFD "Streamable HTTP & WebSocket Transport". The
//! client stays what it is over stdio (acp-blocking on plain threads, the same rendering,
//! permissions and services of this machine): a thread with a small tokio runtime pumps the
//! link into one end of a Unix socket pair, and the connection reads and writes the other end
//! as it would an agent's pipes.

use std::io::{self, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use acp_tokio::acp_proto::RpcError;
use acp_tokio::acp_proto::attach::AttachAnswer;
use acp_tokio::remote::{
    HttpClientOptions, HttpLink, RemoteInfo, TlsClient, WsClientOptions, WsLink, open_http, open_ws,
};

/// The bridge to a remote agent.
#[derive(Debug)]
pub(crate) struct RemoteAgent {
    url: String,
    ended: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    /// With `--attach`: where the answer to `session/attach` arrives.
    attached: Option<mpsc::Receiver<Result<AttachAnswer, RpcError>>>,
}

/// The connection's side of the socket pair: what it reads (the agent's messages, one per
/// line) and where it writes (closing it ends the WebSocket).
pub(crate) struct RemoteIo {
    pub(crate) reader: UnixStream,
    pub(crate) writer: HalfCloser,
}

/// The writing half: dropping it shuts the socket's write direction down (the reading half is
/// a clone of the same socket, so a plain drop would not be seen as the end).
#[derive(Debug)]
pub(crate) struct HalfCloser(UnixStream);

impl Write for HalfCloser {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl Drop for HalfCloser {
    fn drop(&mut self) {
        let _ = self.0.shutdown(Shutdown::Write);
    }
}

impl RemoteAgent {
    /// Opens the link (within `timeout`); returns the bridge, the connection's I/O and what the
    /// server said. Fails with the server's answer (e.g. `401` to a WebSocket upgrade) or the
    /// network error; over HTTP the server answers only `initialize`, so a refusal comes back
    /// as its error.
    pub(crate) fn connect(
        url: &str,
        token: Option<String>,
        timeout: Duration,
        ca_file: Option<&std::path::Path>,
        attach: Option<super::shared::Attach>,
    ) -> io::Result<(RemoteAgent, RemoteIo, RemoteInfo)> {
        let tls = match ca_file {
            Some(path) => {
                crate::files::check_regular(path, crate::files::MAX_PEM_BYTES)
                    .map_err(|e| io::Error::new(e.kind(), format!("cannot read --ca-file {}: {e}", path.display())))?;
                Some(TlsClient::trusting(Some(path))?)
            }
            None => None,
        };
        let (ours, theirs) = UnixStream::pair()?;
        let (opened_tx, opened) = mpsc::sync_channel(1);
        let ended = Arc::new(AtomicBool::new(false));
        let (target, done) = (url.to_owned(), ended.clone());
        let (attach, attached) = match attach {
            Some(attach) => {
                let (answered, attached) = mpsc::sync_channel(1);
                (Some((attach, answered)), Some(attached))
            }
            None => (None, None),
        };
        let thread = thread::Builder::new().name("acp-remote".into()).spawn(move || {
            bridge(&target, Dial { token, timeout, tls }, ours, opened_tx, attach);
            done.store(true, Ordering::SeqCst);
        })?;
        let info = match opened.recv() {
            Ok(Ok(info)) => info,
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(io::Error::other("the connection thread ended")),
        };
        let reader = theirs.try_clone()?;
        let io = RemoteIo { reader, writer: HalfCloser(theirs) };
        Ok((RemoteAgent { url: url.to_owned(), ended, thread: Some(thread), attached }, io, info))
    }

    /// With `--attach`: the answer to `session/attach`, waited for up to `timeout` (`None`
    /// past it, or when the link ended first).
    pub(crate) fn attached(&self, timeout: Duration) -> Option<Result<AttachAnswer, RpcError>> {
        self.attached.as_ref()?.recv_timeout(timeout).ok()
    }

    /// `Some` once the WebSocket is closed.
    pub(crate) fn ended(&self) -> Option<String> {
        self.ended.load(Ordering::SeqCst).then(|| format!("the connection to {} closed", self.url))
    }

    /// Waits up to `grace` for the WebSocket to close (the connection's side is closed first),
    /// running `poll` meanwhile. A bridge still open then is left to end with the process.
    pub(crate) fn close(&mut self, grace: Duration, mut poll: impl FnMut()) {
        let deadline = Instant::now() + grace;
        while !self.ended.load(Ordering::SeqCst) && Instant::now() < deadline {
            poll();
            thread::sleep(Duration::from_millis(10));
        }
        if self.ended.load(Ordering::SeqCst)
            && let Some(thread) = self.thread.take()
        {
            let _ = thread.join();
        }
    }
}

/// A link of either profile.
enum Link {
    Ws(WsLink),
    Http(HttpLink),
}

impl Link {
    /// Opens the link `url`'s scheme names: `http://` and `https://` are Streamable HTTP,
    /// anything else goes to the WebSocket client (which refuses what it does not speak).
    async fn open(url: &str, dial: Dial) -> Result<Link, acp_tokio::Error> {
        let Dial { token, timeout, tls } = dial;
        if url.starts_with("http://") || url.starts_with("https://") {
            let options = HttpClientOptions {
                bearer_token: token,
                connect_timeout: timeout,
                tls,
                #[cfg(feature = "unstable_resumable_transport")]
                reconnect: Some(reported_reconnects(url)),
                ..HttpClientOptions::default()
            };
            return Ok(Link::Http(open_http(url, &options).await?));
        }
        let options = WsClientOptions {
            bearer_token: token,
            connect_timeout: timeout,
            tls,
            #[cfg(feature = "unstable_resumable_transport")]
            reconnect: Some(reported_reconnects(url)),
            ..WsClientOptions::default()
        };
        Ok(Link::Ws(open_ws(url, &options).await?))
    }

    fn info(&self) -> &RemoteInfo {
        match self {
            Link::Ws(link) => link.info(),
            Link::Http(link) => link.info(),
        }
    }

    async fn pump(self, socket: tokio::net::UnixStream) {
        let (lines_out, lines_in) = socket.into_split();
        match self {
            Link::Ws(link) => link.pump(lines_out, lines_in).await,
            Link::Http(link) => link.pump(lines_out, lines_in).await,
        }
    }
}

/// A link that resumes a lost WebSocket or SSE stream (when the server resumes), telling the
/// user on stderr: the loss, the resume, or why it failed (the server's words escaped).
#[cfg(feature = "unstable_resumable_transport")]
fn reported_reconnects(url: &str) -> acp_tokio::remote::Reconnect {
    use acp_tokio::remote::LinkEvent;
    let (events, mut reported) = tokio::sync::mpsc::channel(16);
    let url = crate::sanitize::clean_line(url).into_owned();
    tokio::spawn(async move {
        while let Some(event) = reported.recv().await {
            let said = match event {
                LinkEvent::Lost { reason } => format!("connection to {url} lost ({reason}); resuming"),
                LinkEvent::Resumed { cursor, resent, turns } => {
                    let running = turns.iter().filter(|t| t.state != "idle").map(|t| match &t.prompt_request_id {
                        Some(prompt) => format!("{} {} (prompt {prompt})", t.session, t.state),
                        None => format!("{} {}", t.session, t.state),
                    });
                    let running: Vec<String> = running.take(3).collect();
                    let turns = match running.is_empty() {
                        true => String::new(),
                        false => format!("; turns: {}", running.join(", ")),
                    };
                    format!("connection resumed after cursor {cursor}; {resent} message(s) sent again{turns}")
                }
                LinkEvent::Failed { reason } => format!("could not resume the connection: {reason}"),
                _ => continue,
            };
            eprintln!("acp: {}", crate::sanitize::clean_line(&said));
        }
    });
    acp_tokio::remote::Reconnect { events: Some(events), ..acp_tokio::remote::Reconnect::default() }
}

/// How to open the link: the bearer token, the connect deadline, and for `wss://` and
/// `https://` the CAs.
struct Dial {
    token: Option<String>,
    timeout: Duration,
    tls: Option<TlsClient>,
}

/// The bridge thread: opens the link, says how that went, then pumps until both ends closed.
fn bridge(
    url: &str,
    dial: Dial,
    ours: UnixStream,
    opened: mpsc::SyncSender<io::Result<RemoteInfo>>,
    attach: Option<(super::shared::Attach, super::shared::Answered)>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            let _ = opened.send(Err(e));
            return;
        }
    };
    runtime.block_on(async {
        let link = match Link::open(url, dial).await {
            Ok(link) => link,
            Err(e) => {
                let e = match e {
                    acp_tokio::Error::Io(e) => e,
                    other => io::Error::other(other.to_string()),
                };
                let _ = opened.send(Err(e));
                return;
            }
        };
        let socket = ours.set_nonblocking(true).and_then(|()| tokio::net::UnixStream::from_std(ours));
        let socket = match socket {
            Ok(socket) => socket,
            Err(e) => {
                let _ = opened.send(Err(e));
                return;
            }
        };
        let _ = opened.send(Ok(link.info().clone()));
        match attach {
            // With `--attach`, the shim sits between the connection and the link.
            Some((attach, answered)) => match tokio::net::UnixStream::pair() {
                Ok((core_side, link_side)) => {
                    let shim = super::shared::shim(socket, core_side, attach, answered);
                    tokio::join!(shim, link.pump(link_side));
                }
                Err(e) => eprintln!("acp: cannot attach: {e}"),
            },
            None => link.pump(socket).await,
        }
    });
}

/// Opens the link to the remote agent at `url` (`--connect`) and says so; `None` after
/// reporting why not.
pub(crate) fn connect_remote(
    url: &str,
    config: &super::config::ClientConfig,
    render: &mut super::render::Renderer,
) -> Option<(RemoteAgent, RemoteIo)> {
    let (token, timeout, ca_file) = (config.token.clone(), config.connect_timeout, config.ca_file.as_deref());
    match RemoteAgent::connect(url, token, timeout, ca_file, config.attach.clone()) {
        Ok((link, io, info)) => {
            match info.connection_id.as_deref() {
                Some(id) => render.info(&format!("connected to {url} (connection {id})")),
                // Streamable HTTP: the server names the connection when it answers initialize.
                None => render.info(&format!("connected to {url}")),
            }
            Some((link, io))
        }
        Err(e) => {
            render.error(&format!("could not connect: {e}"));
            None
        }
    }
}
