//! One scenario suite, written once, run on every runtime: acp-tokio on a multi-thread runtime
//! and in a `LocalSet` (`!Send` handlers), acp-tokio's driver on async-std (feature
//! `async-std`), and acp-blocking (its client and its agent); and across the adapters (either
//! one's client with the other's agent). Each scenario runs as one `#[test]` per version and runtime,
//! named `<version>::<runtime>::<scenario>` (`v2::blocking::turns`), so a failure names all
//! three. The v2 runs (module `v2`, feature `unstable_protocol_v2`) use both adapters' v2
//! clients and the v2 echo agent (`acp_scenarios::v2`); CI runs them on every runtime with
//! `cargo test -p acp-tokio -p acp-scenarios --all-features` (`.ci/run`, the step "acp-tokio
//! on async-std": all features are `async-std` and `unstable_protocol_v2`).
//!
//! * The scenarios ([`scenarios`]) speak the client API through [`conn::Conn`] and
//!   [`conn::Turn`] (implemented by both adapters' clients), a vocabulary neutral to the
//!   protocol version (session ids as strings, a prompt as a text, a turn's updates as texts,
//!   its end as a [`conn::Stop`], the version as `Conn::VERSION`), so that one text can run
//!   on v1's clients and v2's and get their peers from a
//!   [`rig::Runtime`]: a client connected to the echo agent of the same adapter
//!   (acp-scenarios's `echo` and `blocking_echo`, which speak the same commands),
//!   over a Unix socket pair whose agent end the test can shut down.
//! * **A scenario**: write `pub(crate) async fn name<R: Runtime>(runtime: &R)` in a module of
//!   `scenarios/`, then add `name` to the lists below (to `every_runtime!` unless some runtime
//!   cannot express it: say why where it is left out). Make it able to fail, and bound every
//!   wait by what the scenario does, not by time (the whole scenario has a hang guard).
//! * **A runtime**: implement [`rig::Runtime`] in [`runtimes`] (run a scenario to the end;
//!   serve an echo agent and connect a client to it from [`rig::wire`]'s ends), then add a
//!   module below with `every_runtime!`.
#![cfg(unix)]

mod conn;
#[cfg(feature = "unstable_protocol_v2")]
mod conn_v2;
mod local;
mod rig;
mod runtimes;
#[cfg(feature = "unstable_protocol_v2")]
mod runtimes_v2;
mod scenarios;

/// One `#[test]` per scenario, on `$runtime`.
macro_rules! on {
    ($runtime:expr => $($scenario:ident),* $(,)?) => {$(
        #[test]
        fn $scenario() {
            let runtime = $runtime;
            crate::rig::Runtime::block_on(&runtime, crate::scenarios::$scenario(&runtime));
        }
    )*};
}

/// The scenarios every runtime runs, plus `$extra`.
macro_rules! every_runtime {
    ($runtime:expr $(, $extra:ident)* $(,)?) => {
        on!($runtime =>
            handshake_and_sessions,
            turns,
            permission_granted,
            permission_cancelled_by_the_turns_cancel,
            client_cancels_a_turn_mid_stream,
            client_notifies_a_cancel_mid_stream,
            dropped_turn_cancels_on_the_agent,
            request_timeout_cancels_on_the_agent,
            extension_notifications_reach_the_agent_in_order,
            agent_cancels_its_request_to_the_client,
            backpressure_bounds_a_storm_read_slowly,
            peer_death_mid_turn_ends_every_call,
            agent_requests_follow_the_updates_sent_before_them,
            handler_panic_is_isolated,
            client_services,
            unadvertised_capabilities_are_refused_locally,
            $($extra),*
        );
    };
}

/// The scenarios on v1.
mod v1 {
    mod tokio_multi_thread {
        every_runtime!(crate::runtimes::TokioMultiThread::new(), dropped_request_cancels_on_the_agent);
    }

    mod tokio_local_set {
        every_runtime!(crate::runtimes::TokioLocalSet::new(), dropped_request_cancels_on_the_agent);
    }

    #[cfg(feature = "async-std")]
    mod async_std {
        every_runtime!(crate::runtimes::AsyncStd, dropped_request_cancels_on_the_agent);
    }

    /// `dropped_request_cancels_on_the_agent` is left out: a blocking call cannot be abandoned by
    /// its caller, so there is no dropped request (its timeout, which sends the same
    /// `$/cancel_request`, is `request_timeout_cancels_on_the_agent`).
    mod blocking {
        every_runtime!(crate::runtimes::Blocking);
    }

    /// Across the adapters, as `blocking` for the same reason.
    mod blocking_client_tokio_agent {
        every_runtime!(crate::runtimes::BlockingClientTokioAgent::new());
    }

    mod tokio_client_blocking_agent {
        every_runtime!(crate::runtimes::TokioClientBlockingAgent::new(), dropped_request_cancels_on_the_agent);
    }
}

/// The scenarios on v2 (feature `unstable_protocol_v2`), on every runtime.
///
/// Left out, because v2 cannot express them: `client_services` and
/// `unadvertised_capabilities_are_refused_locally` (v2 has no client-side `fs/*` or
/// `terminal/*`); `agent_requests_follow_the_updates_sent_before_them` (its agent requests are
/// file reads; the same gate for v2's permission asks is acp-tokio's
/// `tests/v2_parts/ordering.rs`). Where the client is a blocking one,
/// `dropped_request_cancels_on_the_agent` is left out as on v1.
#[cfg(feature = "unstable_protocol_v2")]
mod v2 {
    /// The scenarios v2 runs on every runtime.
    macro_rules! every_runtime_v2 {
        ($runtime:expr $(, $extra:ident)* $(,)?) => {
            on!(crate::runtimes_v2::V2($runtime) =>
                handshake_and_sessions,
                turns,
                permission_granted,
                permission_cancelled_by_the_turns_cancel,
                client_cancels_a_turn_mid_stream,
                client_notifies_a_cancel_mid_stream,
                dropped_turn_cancels_on_the_agent,
                request_timeout_cancels_on_the_agent,
                extension_notifications_reach_the_agent_in_order,
                agent_cancels_its_request_to_the_client,
                backpressure_bounds_a_storm_read_slowly,
                peer_death_mid_turn_ends_every_call,
                handler_panic_is_isolated,
                $($extra),*
            );
        };
    }

    mod tokio_multi_thread {
        every_runtime_v2!(crate::runtimes::TokioMultiThread::new(), dropped_request_cancels_on_the_agent);
    }

    mod tokio_local_set {
        every_runtime_v2!(crate::runtimes::TokioLocalSet::new(), dropped_request_cancels_on_the_agent);
    }

    #[cfg(feature = "async-std")]
    mod async_std {
        every_runtime_v2!(crate::runtimes::AsyncStd, dropped_request_cancels_on_the_agent);
    }

    mod blocking {
        every_runtime_v2!(crate::runtimes::Blocking);
    }

    mod blocking_client_tokio_agent {
        every_runtime_v2!(crate::runtimes::BlockingClientTokioAgent::new());
    }

    mod tokio_client_blocking_agent {
        every_runtime_v2!(crate::runtimes::TokioClientBlockingAgent::new(), dropped_request_cancels_on_the_agent);
    }
}
