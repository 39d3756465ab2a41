//! The public functions both protocol versions have with the same names and behaviour
//! (`serve*` of the crate root and of `v2`, the constructors and the process calls of both
//! `ClientConnection`s), written once: each version supplies its handler trait and the one
//! function that opens a connection of it over an [`Io`](crate::transport::Io).

/// `serve_stdio`, `serve`, `serve_with` and `serve_fds` for the handler trait `$Agent`, in a
/// module whose `serve_io(agent, io, options)` serves one connection.
macro_rules! serve_functions {
    ($Agent:ident) => {
        // Serves `agent` on this process's stdin and stdout until stdin ends (and the last frames
        /// are flushed). Nothing else may write to stdout; log to stderr.
        ///
        /// On Unix, when both are pipes or sockets (as when a client spawned this agent), this is
        /// [`serve_fds`]: the calling thread reads and writes them itself. On a terminal or a file
        /// (where `poll(2)` tells nothing useful, or the non-blocking mode would leak into the user's
        /// shell) a reader and a writer thread do it, as in [`serve_with`]. While it serves over
        /// pipes, stdin and stdout are non-blocking (restored when it returns): processes the agent
        /// starts should get their own stdin and stdout, not inherit these.
        pub fn serve_stdio<A: $Agent>(agent: A) -> Result<(), Error> {
            #[cfg(unix)]
            return serve_fds(agent, std::io::stdin(), std::io::stdout(), AgentOptions::default());
            #[cfg(not(unix))]
            serve_with(agent, std::io::stdin(), std::io::stdout(), AgentOptions::default())
        }

        /// Serves `agent` over any byte transport until the input ends.
        pub fn serve<A: $Agent>(
            agent: A,
            reader: impl std::io::Read + Send + 'static,
            writer: impl std::io::Write + Send + 'static,
        ) -> Result<(), Error> {
            serve_with(agent, reader, writer, AgentOptions::default())
        }

        /// [`serve`] with options. Runs the driver on the calling thread; returns once the connection
        /// closed: `Ok` when the input ended (and the client stopped reading after that, if it did:
        /// [`acp_runtime::peer_left`]), the I/O error when reading or writing failed otherwise.
        ///
        /// The end of input is a half-close (acp-proto's `half_close`): the requests read before it
        /// are still answered before `serve` returns. Their handlers are told
        /// ([`CancelReason::InputEnded`](acp_proto::CancelReason::InputEnded)), and one that has not
        /// answered within `config.cancel_grace` is answered `-32800` for it. Handlers still running
        /// when the connection closes see their request cancelled; their results are discarded.
        ///
        /// A reader and a writer thread move the bytes. Over pipes or sockets, [`serve_fds`] does
        /// the same with fewer thread switches per request.
        pub fn serve_with<A: $Agent>(
            agent: A,
            reader: impl std::io::Read + Send + 'static,
            writer: impl std::io::Write + Send + 'static,
            options: AgentOptions,
        ) -> Result<(), Error> {
            serve_io(agent, crate::transport::Io::threads(reader, writer), options)
        }

        /// [`serve_with`] over two descriptors (Unix), read and written by the calling thread itself:
        /// it waits for them, for its timers and for its handlers in one `poll(2)`, with no reader or
        /// writer thread, so a request costs two thread switches fewer each way.
        ///
        /// That needs both to be pipes or sockets; anything else (a regular file, a terminal, a
        /// character device such as `/dev/null`) is served by threads, as [`serve_with`] does. The
        /// descriptors are non-blocking while the connection runs and get their mode back when it
        /// ends, however it ends (a panic included). Frames are written to `writer`'s descriptor
        /// directly: what `writer` itself buffered is flushed once before. Meanwhile nothing else
        /// may read or write them (a thread writing to a non-blocking stdout could see `WouldBlock`;
        /// a child process that inherited them sees the non-blocking mode too).
        #[cfg(unix)]
        pub fn serve_fds<A: $Agent>(
            agent: A,
            reader: impl std::io::Read + std::os::fd::AsFd + Send + 'static,
            writer: impl std::io::Write + std::os::fd::AsFd + Send + 'static,
            options: AgentOptions,
        ) -> Result<(), Error> {
            serve_io(agent, crate::transport::Io::fds(reader, writer), options)
        }
    };
}

/// The constructors and the process calls of a `ClientConnection` for the handler trait
/// `$Client`, in an `impl ClientConnection` whose `open(client, open, options)` starts one and
/// whose field `running` is its [`Running`](crate::client::Running).
macro_rules! client_connection_functions {
    ($Client:ident) => {
        /// Connects `client` to an agent over `reader` (the agent's output) and `writer` (its
        /// input). The driver runs on its own thread.
        pub fn connect<C: $Client>(
            client: C,
            reader: impl std::io::Read + Send + 'static,
            writer: impl std::io::Write + Send + 'static,
            options: ClientOptions,
        ) -> Result<ClientConnection, Error> {
            ClientConnection::open(
                client,
                crate::client::Open::Io(crate::transport::Io::threads(reader, writer)),
                options,
            )
        }

        /// Spawns `command` as the agent, with stdin and stdout piped to the connection and stderr
        /// drained into a ring buffer ([`stderr_tail`](Self::stderr_tail)). On unix the agent
        /// leads its own process group.
        pub fn spawn<C: $Client>(
            client: C,
            command: std::process::Command,
            options: ClientOptions,
        ) -> Result<ClientConnection, Error> {
            ClientConnection::open(client, crate::client::Open::Spawn(command), options)
        }

        /// [`connect`](Self::connect) over two descriptors (Unix), read and written by the
        /// driver thread itself with `poll(2)`: no reader or writer thread, so a request costs two
        /// thread switches fewer each way. [`spawn`](Self::spawn) does this with the agent's pipes.
        ///
        /// That needs both to be pipes or sockets; anything else (a regular file, a terminal, a
        /// character device) is served by threads as in [`connect`](Self::connect). The
        /// descriptors are non-blocking while the connection runs and get their mode back when it
        /// ends. Frames are written to `writer`'s descriptor directly: what `writer` itself
        /// buffered is flushed once before. Meanwhile nothing else may read or write them.
        #[cfg(unix)]
        pub fn connect_fds<C: $Client>(
            client: C,
            reader: impl std::io::Read + std::os::fd::AsFd + Send + 'static,
            writer: impl std::io::Write + std::os::fd::AsFd + Send + 'static,
            options: ClientOptions,
        ) -> Result<ClientConnection, Error> {
            ClientConnection::open(client, crate::client::Open::Io(crate::transport::Io::fds(reader, writer)), options)
        }

        /// The agent process's id, when the connection spawned it.
        pub fn child_id(&self) -> Option<u32> {
            self.running.child_id()
        }

        /// The last lines the spawned agent wrote to stderr (empty without a child process).
        pub fn stderr_tail(&self) -> String {
            self.running.stderr_tail()
        }

        /// Closes the connection: every pending call returns [`Error::ConnectionClosed`], the
        /// queued frames are flushed (for at most `flush_timeout`) and the agent's input is
        /// closed. A spawned agent then gets `close_grace` to exit, after which its process group
        /// is terminated, then killed; it is reaped and its exit status returned. Later calls
        /// return the same status.
        ///
        /// Over [`connect`](Self::connect), closing drops the writer (the peer sees the end of its
        /// input); the reader thread ends when the reader does, since a blocking read cannot be
        /// interrupted.
        pub fn close(&self) -> Result<Option<std::process::ExitStatus>, Error> {
            self.running.close()
        }
    };
}
