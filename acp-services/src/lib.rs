//! # acp-services: what an ACP client serves to its agent
//!
//! An [ACP](https://agentclientprotocol.com) agent may ask its client to read and write files
//! (`fs/read_text_file`, `fs/write_text_file`) and to run commands in terminals
//! (`terminal/create`, `output`, `wait_for_exit`, `kill`, `release`). This crate implements
//! those methods safely, on plain `std` (threads, no async runtime), against the typed
//! requests and responses of [`acp_proto`], for any adapter or client to reuse:
//!
//! * [`FsSandbox`]: the `fs/*` methods, confined to a set of allowed roots;
//! * [`Terminals`]: the `terminal/*` methods, as child processes with captured output;
//! * [`ClientServices`]: both, with the [`ClientCapabilities`](acp_proto::types::ClientCapabilities)
//!   they back, so a client advertises exactly what it can serve, and a dispatcher.
//!
//! Every method takes `&self` and every type is `Send + Sync`: share one instance between the
//! handler threads. Refusals are [`RpcError`](acp_proto::RpcError)s whose `data` carries a
//! readable `reason`, a machine-readable `kind` ([`ErrorKind`]) and the `path` concerned.
//! No request input makes them panic.
//!
//! ```
//! use acp_proto::types::*;
//! use acp_services::{ClientServices, ErrorKind, FsSandbox, TerminalConfig, Terminals};
//!
//! let project = std::env::temp_dir().join(format!("acp-services-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&project).unwrap();
//! let services = ClientServices::new()
//!     .with_fs(FsSandbox::new([&project]).unwrap())
//!     .with_terminals(Terminals::new(TerminalConfig::new([&project])).unwrap());
//! let caps = services.capabilities();
//! assert!(caps.supports_read_text_file() && caps.supports_write_text_file() && caps.supports_terminal());
//!
//! // Files: absolute paths inside the roots only.
//! let fs = services.fs().unwrap();
//! let notes = format!("{}/notes/todo.txt", project.display());
//! fs.write_text_file(&WriteTextFileRequest::new("sess", notes.as_str(), "one\ntwo\nthree\n")).unwrap();
//! let mut read = ReadTextFileRequest::new("sess", notes.as_str());
//! (read.line, read.limit) = (Some(2), Some(1));
//! assert_eq!(fs.read_text_file(&read).unwrap().content, "two\n");
//! let err = fs.read_text_file(&ReadTextFileRequest::new("sess", "/etc/passwd")).unwrap_err();
//! assert_eq!((err.code.0, ErrorKind::of(&err)), (-32602, Some(ErrorKind::OutsideRoots)));
//!
//! // Terminals: the program is run directly, with its arguments, in a root.
//! # #[cfg(unix)] {
//! let terminals = services.terminals().unwrap();
//! let mut create = CreateTerminalRequest::new("sess", "sh");
//! create.args = Some(vec!["-c".into(), "cat notes/todo.txt; exit 3".into()]);
//! let id = terminals.create(&create).unwrap().terminal_id;
//! let exit = terminals.wait_for_exit(&WaitForTerminalExitRequest::new("sess", id.clone())).unwrap();
//! assert_eq!(exit.exit_code, Some(3));
//! let out = terminals.output(&TerminalOutputRequest::new("sess", id.clone())).unwrap();
//! assert_eq!((out.output.as_str(), out.truncated), ("one\ntwo\nthree\n", false));
//! terminals.release(&ReleaseTerminalRequest::new("sess", id.clone())).unwrap();
//! let gone = terminals.output(&TerminalOutputRequest::new("sess", id)).unwrap_err();
//! assert_eq!(gone.code.0, -32002);
//! # }
//! # std::fs::remove_dir_all(&project).unwrap();
//! ```
//!
//! ## The file sandbox
//!
//! A path is served only if it is absolute and, once `..` and every symbolic link are
//! resolved, lies under one of the roots. In order:
//!
//! 1. **shape**: not empty, at most 16 KiB, no NUL byte (`invalid_path`), absolute
//!    (`not_absolute`);
//! 2. **lexical check**, no system call: with `.` dropped and `..` applied to the text, the
//!    path must be under a root (`path_traversal` if it started under one and climbed out,
//!    else `outside_roots`);
//! 3. **walk** from `/`, one component at a time, as the kernel would: symbolic links are
//!    read and replaced by their target (at most 40 by default, `too_many_symlinks`), `..`
//!    goes to the real parent. Once inside a root, the walk may cross the roots' ancestors
//!    but never stand on anything else (`symlink_escape`); the first missing component ends
//!    the look-ups (nothing below it can be a link), so a file to create, or its missing
//!    parents, are checked through their deepest existing ancestor;
//! 4. **final check**: the resulting link-free path must be under a root.
//!
//! All violations are `-32602`; a missing file is `-32002`. These steps name the file and
//! give the precise refusal; what keeps the access inside the roots is that, on Unix, every
//! file operation then goes through descriptors, never a path. Each root is opened once when
//! the sandbox is built, and the resolved path (link-free when checked) is reopened beneath
//! its root's descriptor with every link refused: `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)` on Linux 5.6 and later, else one
//! `openat(O_NOFOLLOW)` per component. A directory swapped for a link after the check makes
//! the request fail (`symlink_escape`) instead of escaping. A link from one root into another
//! is still followed: the target is reopened beneath the root it lies in.
//!
//! * Reads open with `O_NONBLOCK | O_NOFOLLOW` and check the descriptor with `fstat`: a FIFO
//!   or device swapped in is refused (`not_a_file`) and cannot block the open. A regular file
//!   with more than one hard link is refused (`hard_link`): its bytes may be a file outside
//!   the roots; [`FsConfig::allow_hard_links`] lifts this.
//! * Writes open the parent directory beneath the root, create missing parents with
//!   `mkdirat` (entering each with `O_NOFOLLOW`), create a temporary file in that directory
//!   descriptor (`O_CREAT | O_EXCL`), then `renameat` it over the target in the same
//!   descriptor: atomic, never following a link, splitting hard links instead of writing
//!   through them.
//!
//! On other systems the resolved path is reopened by name, and a concurrent change of the
//! tree between the check and the use is not ruled out. See [`FsSandbox`] for line/limit,
//! UTF-8, the read cap and parent directories.
//!
//! ## Terminals
//!
//! [`Terminals`] runs the command directly (or through `sh -c` if
//! [`TerminalConfig::shell`] is set), in the request's `cwd` if it lies under the allowed
//! roots (checked like a file path; refused otherwise) or in the configured default, with the
//! request's `env` added. Stdout and stderr share one pipe, drained by a reader thread into a
//! buffer that keeps the newest `outputByteLimit` bytes at a character boundary; a waiter
//! thread reaps the process. On Unix the command leads its own process group and kills reach
//! the whole group. The module docs of [`terminal`] give the details.
//!
//! **Confinement.** By default ([`TerminalConfig::confine`]) the kernel confines every
//! command with Landlock: read, write and execute beneath the roots, read and execute of the
//! system directories a command needs ([`terminal::default_system_paths`]: `/usr`, `/etc`,
//! `/proc`, a few `/dev` files, git's user config... never `/tmp` nor the home directory;
//! extend [`TerminalConfig::system_paths`]), nothing else; from Landlock ABI 6 it cannot
//! signal processes outside its sandbox either. As the workspace forbids `unsafe`, one
//! confined spawner thread per [`Terminals`] starts the commands; the caller's threads stay
//! unconfined. [`Terminals::new`] fails when the kernel cannot enforce this fully: check
//! [`terminal::landlock_status`], and **do not advertise terminals on such a kernel** unless
//! the user opted into unconfined ones (`confine = false`; acp-cli's
//! `--unconfined-terminals`). The request's `env` may not set loader variables (`LD_*`,
//! `GLIBC_TUNABLES`, `DYLD_*`: `forbidden_env`).
//!
//! **Ending everything.** [`Terminals::shutdown`] (or [`ClientServices::shutdown`]) kills and
//! reaps every process, releases every pending `wait_for_exit` (`shut_down` unless an exit
//! status was published) and refuses new terminals; [`Terminals::wait_for_exit_until`] lets a
//! client give up one wait. Commands that `setsid` out of their process group are collected
//! by a client that is a child subreaper and ended by [`terminal::kill_orphans`] (Linux).
//!
//! ## Dependencies
//!
//! `acp-proto` (the types), `serde_json` (error data) and, on Unix, `rustix` (safe
//! `kill(-pgid)` and `waitid`, as the workspace forbids `unsafe`).
#![deny(missing_docs)]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod error;
pub mod fs;
mod path;
mod services;
pub mod terminal;

pub use error::ErrorKind;
pub use fs::{FsConfig, FsSandbox};
pub use services::ClientServices;
pub use terminal::{TerminalConfig, Terminals};

#[cfg(test)]
mod testutil;

/// Compile-time check that the services can be shared between threads.
#[allow(dead_code)]
fn assert_send_sync() {
    fn check<T: Send + Sync>() {}
    check::<FsSandbox>();
    check::<Terminals>();
    check::<ClientServices>();
}
