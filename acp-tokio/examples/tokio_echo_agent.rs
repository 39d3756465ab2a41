//! An ACP agent on tokio that echoes prompts back, on stdin/stdout.
//!
//! ```text
//! tokio_echo_agent               # echo mode: see the commands in examples/support/echo.rs
//! tokio_echo_agent --updates N   # benchmark mode: N chunks per prompt (shared/bench)
//! tokio_echo_agent --runtime async-std   # the same on async-std (feature `async-std`)
//! tokio_echo_agent --tight       # tiny bounds (4 requests in flight, 8 awaiting answers, a
//!                                # 256-byte output budget) and one-page stdio pipes: the flood
//!                                # test (tests/tokio/flood.rs)
//! ```
//!
//! It speaks the same commands as the blocking adapter's `echo_agent` (`storm N`, `permission`,
//! `read PATH`, `terminal CMD...`, `wait`, `panic`), exits as soon as stdin ends and logs only
//! to stderr. Drive it with the `tokio_client` example, or with the blocking adapter's `client`
//! (`client --agent target/debug/examples/tokio_echo_agent storm 5`).

#[cfg(target_os = "linux")]
use std::os::fd::AsFd;

#[path = "support/echo.rs"]
mod echo;

fn main() {
    let mut agent = echo::EchoAgent::default();
    let mut async_std = false;
    let mut tight = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--updates" => agent.updates_per_prompt = args.next().and_then(|n| n.parse().ok()),
            "--runtime" => async_std = args.next().as_deref() == Some("async-std"),
            "--tight" => tight = true,
            other => {
                eprintln!(
                    "tokio_echo_agent: unknown argument `{other}` (usage: tokio_echo_agent [--updates N] [--runtime async-std] [--tight])"
                );
                std::process::exit(2);
            }
        }
    }
    if async_std {
        #[cfg(feature = "async-std")]
        if let Err(e) = async_std::task::block_on(acp_tokio::async_std::serve_stdio(agent)) {
            eprintln!("tokio_echo_agent: {e}");
        }
        #[cfg(not(feature = "async-std"))]
        eprintln!("tokio_echo_agent: built without the `async-std` feature");
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    #[cfg(target_os = "linux")]
    if tight {
        // Pipes of one page: both directions fill after a few frames.
        for fd in [std::io::stdin().as_fd(), std::io::stdout().as_fd()] {
            let _ = rustix::pipe::fcntl_setpipe_size(fd, 4096);
        }
    }
    let result = if tight {
        let mut options = acp_tokio::AgentOptions::default();
        options.config = echo::flood_config();
        runtime.block_on(acp_tokio::serve(agent, tokio::io::stdin(), tokio::io::stdout(), options))
    } else {
        runtime.block_on(acp_tokio::serve_stdio(agent))
    };
    if let Err(e) = result {
        eprintln!("tokio_echo_agent: {e}");
    }
    // Do not wait for a blocked stdin reader thread: the connection is over.
    runtime.shutdown_background();
}
