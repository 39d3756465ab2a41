//! The public entry points of each version and runtime, from one definition: an agent's
//! serving functions (`serve_fns!`) and a client's connecting ones (`connect_fns!`), each
//! generic plumbing under a version's handler trait and a runtime's transport types.

/// An agent's serving functions over a runtime's transport (`$Rt($Io, $io)`: the runtime, the
/// wrapper of its readers and writers, and the module of their traits). Each entry is either
///
/// * `fn name<A: Trait>(Send) => start(Handlers, more…);` (no `Send` for a local trait): serves
///   over any reader and writer, starting the driver with `Launch::start(Handlers::new(agent),
///   more…)`; or
/// * `fn name<A: Trait> = stdio(serve);`: `serve` over this process's stdin and stdout (tokio).
macro_rules! serve_fns {
    ($Rt:ident $io:tt {}) => {};
    (
        $Rt:ident($Io:ident, $($io:ident)::+) {
            $(#[$doc:meta])* fn $name:ident<A: $Trait:ident>($($send:ident)?) => $start:ident($Handlers:ident $(, $more:expr)?);
            $($rest:tt)*
        }
    ) => {
        $(#[$doc])*
        pub async fn $name<A: $Trait>(
            agent: A,
            reader: impl $($io)::+::AsyncRead $(+ $send)? + 'static,
            writer: impl $($io)::+::AsyncWrite $(+ $send)? + 'static,
            options: AgentOptions,
        ) -> Result<(), Error> {
            let launch = crate::serve::Launch::new($Rt, $Io::new(reader), $Io::new(writer), &options);
            launch.$start($Handlers::new(agent) $(, $more)?).await
        }

        serve_fns!($Rt($Io, $($io)::+) { $($rest)* });
    };
    (
        $Rt:ident($Io:ident, $($io:ident)::+) {
            $(#[$doc:meta])* fn $name:ident<A: $Trait:ident> = stdio($serve:ident);
            $($rest:tt)*
        }
    ) => {
        $(#[$doc])*
        pub async fn $name<A: $Trait>(agent: A) -> Result<(), Error> {
            #[cfg(unix)]
            if let Some(pipes) = crate::io::StdioPipes::open() {
                // Blocking mode comes back when the guard drops: at the end, or when this future
                // is dropped or unwinds.
                let (reader, writer, _blocking) = pipes.take();
                return $serve(agent, reader, writer, AgentOptions::default()).await;
            }
            $serve(agent, tokio::io::stdin(), tokio::io::stdout(), AgentOptions::default()).await
        }

        serve_fns!($Rt($Io, $($io)::+) { $($rest)* });
    };
}

/// A client's connecting functions of version `$P` over a runtime's transport (`$Rt($Io, $io)`
/// as for `serve_fns!`). Each entry is either
///
/// * `fn name<C: Trait>(Send) => Handlers;` (no `Send` for a local trait): connects over any
///   reader and writer, its driver spawned where `Handlers` say (`ClientConnection::start`); or
/// * `fn name<C: Trait> = process(spawn, Handlers);`: starts the agent's process with the
///   runtime's `crate::process::spawn` function and connects over its stdin and stdout.
macro_rules! connect_fns {
    ($Rt:ident $io:tt, $P:ident {}) => {};
    (
        $Rt:ident($Io:ident, $($io:ident)::+), $P:ident {
            $(#[$doc:meta])* fn $name:ident<C: $Trait:ident>($($send:ident)?) => $Handlers:ident;
            $($rest:tt)*
        }
    ) => {
        $(#[$doc])*
        pub fn $name<C: $Trait>(
            client: C,
            reader: impl $($io)::+::AsyncRead $(+ $send)? + 'static,
            writer: impl $($io)::+::AsyncWrite $(+ $send)? + 'static,
            options: ClientOptions,
        ) -> crate::versioned::ClientConnection<$P> {
            let (handlers, reader, writer) = ($Handlers::new(client), $Io::new(reader), $Io::new(writer));
            crate::versioned::ClientConnection::start($Rt, handlers, reader, writer, &options)
        }

        connect_fns!($Rt($Io, $($io)::+), $P { $($rest)* });
    };
    (
        $Rt:ident($Io:ident, $($io:ident)::+), $P:ident {
            $(#[$doc:meta])* fn $name:ident<C: $Trait:ident> = process($spawn:ident, $Handlers:ident);
            $($rest:tt)*
        }
    ) => {
        $(#[$doc])*
        pub fn $name<C: $Trait>(
            client: C,
            command: std::process::Command,
            options: ClientOptions,
        ) -> Result<crate::versioned::ClientConnection<$P>, Error> {
            let child = crate::process::$spawn(command)?;
            let transport = ($Io::new(child.stdout), $Io::new(child.stdin));
            let process = (child.child, child.pid, $Io::new(child.stderr));
            let handlers = $Handlers::new(client);
            Ok(crate::versioned::ClientConnection::start_process($Rt, handlers, transport, process, &options))
        }

        connect_fns!($Rt($Io, $($io)::+), $P { $($rest)* });
    };
}
