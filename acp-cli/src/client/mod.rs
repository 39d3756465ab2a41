//! `acp client -- AGENT_CMD...`: a terminal client for any ACP agent.
//!
//! [`run`] spawns the agent, initializes (advertising what the permission policy lets it
//! serve: `fs.readTextFile`, and unless `--deny` `fs.writeTextFile` and `terminal`, served by
//! [`acp_services`] inside the `--root` directories), opens a session in the working
//! directory, then runs one prompt (`-p`) or an interactive loop, whose slash commands
//! (`commands`, `control`, `options`, `reopen`) act on the session and which edits lines on a
//! terminal (`editor`). `initialize`,
//! `authenticate` and `session/new` each have a deadline ([`ClientConfig::connect_timeout`]).
//!
//! Both protocol versions run this one client: the session loop speaks to its agent through a
//! `link` chosen once by [`ClientConfig::protocol`] (v1 passes the session's requests through;
//! v2 maps them and its answers and upserts into the v1 shapes the session draws), so every
//! option, slash command and question works the same on either.
//!
//! The modules are layered, and each imports only from layers below it (nothing imports
//! this module's own items: it declares and re-exports):
//!
//! | layer | modules |
//! |---|---|
//! | what runs | `run` (the agent started, the link made, the session run) |
//! | the session | `session` and its rooms (`session/`: connect, control, questions, steer, …) |
//! | the link | `link` (one per version), `remote` (`--connect`) |
//! | the workers | `handler`, `guard`, `process`, `interrupt`, `editor`, `journal`, `tap` |
//! | what they share | `config`, `event`, and the state each room keeps (`control`, `questions`, `steer`, `attach`), `render` |
//!
//! All terminal output happens on the calling thread, which owns the renderer: every other
//! thread (the turn's update reader, the connection's handlers, the agent's stderr drain,
//! stdin, Ctrl-C) sends it an event. So a permission question never interleaves with
//! streamed text, and Ctrl-C is handled in the same place: it cancels the running turn
//! (`session/cancel`, which also answers a pending permission question `cancelled`), and a
//! second Ctrl-C quits. `SIGTERM` and `SIGHUP` end the client wherever it is: the running turn
//! is cancelled, the agent closed and every process the client started ended, and the exit
//! status is 128 + the signal (see `interrupt`).
//!
//! Every queue between the agent and the screen is bounded: the UI queue holds
//! [`UI_QUEUE`] events and the connection buffers at most [`MAX_BUFFERED`] updates, so a slow
//! terminal slows the agent down instead of growing the client's memory.
//!
//! For scripts ([`Output`]), `--format json` taps the byte streams to the agent and writes every
//! frame and a summary as NDJSON (`tap`, `summary`), and `--quiet` prints the final message
//! alone; `@path` words and `--image` files become the prompt's attachments (`attach`).
//!
//! No process outlives the client: the agent dies with it (`acp __exec-child`, see
//! [`exec_child`]), and at shutdown terminals and orphans are killed (see `children`).
//!
//! stdout and stderr are written by threads of their own (`outlet`): a terminal
//! that is slow (or paused, or a pipe nobody reads) slows the UI thread down, but once a
//! signal came (Ctrl-C, `SIGTERM`, `SIGHUP`), no write waits more than half a second for an
//! output that does not move, so the signal is acted on (the turn cancelled, or the client
//! ended with its agent) whatever stdout does, and the exit does not wait on output nobody
//! reads.

mod attach;
mod children;
mod commands;
mod config;
mod control;
mod diff;
mod editor;
mod elicit;
mod event;
mod exec_child;
mod form;
mod guard;
mod handler;
mod interrupt;
mod journal;
mod link;
mod offer;
mod output;
mod process;
mod questions;
#[cfg(feature = "unstable_resumable_transport")]
mod reload;
mod remote;
mod render;
mod run;
mod session;
mod shared;
mod steer;
mod summary;
mod tap;
mod terminal_auth;

pub use crate::permission::Policy;
pub use attach::{MAX_ATTACHMENTS, MAX_EMBED, MAX_IMAGE, MAX_INLINE_TOTAL, MAX_PROMPT, read_prompt};
pub use config::{CONNECT_TIMEOUT, ClientConfig, MAX_BUFFERED, Resume, UI_QUEUE};
pub use exec_child::{EXEC_CHILD, exec_child};
pub use output::Output;
pub use render::Style;
pub use run::run;
pub use shared::Attach;
// For `acp record` and `acp check` (spawning what dies with them) and `acp replay` (drawing a
// transcript).
pub(crate) use exec_child::command as exec_child_command;
pub(crate) use render::Renderer;
