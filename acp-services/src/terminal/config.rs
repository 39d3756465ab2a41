//! [`TerminalConfig`]: the settings of [`Terminals`](super::Terminals).

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::confine::{PathAccess, default_system_paths};
use crate::path::DEFAULT_MAX_HOPS;

/// Settings of [`Terminals`](super::Terminals).
///
/// `#[non_exhaustive]`: start from [`TerminalConfig::new`] or [`TerminalConfig::default()`]
/// and assign the fields to change.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TerminalConfig {
    /// The directories a request's `cwd` must lie in (checked like an `fs/*` path, symbolic
    /// links included). Each must be an absolute path to an existing directory.
    pub roots: Vec<PathBuf>,
    /// The working directory of a request without `cwd` (default: the first root, with
    /// [`TerminalConfig::new`]). `None`: such requests are refused (`no_working_directory`).
    /// Not required to be inside `roots`: it is the client's own choice, not the agent's.
    pub default_cwd: Option<PathBuf>,
    /// Run `command` through the shell (`/bin/sh -c`, `cmd /C` on Windows), with each
    /// argument appended as a quoted word (default `false`: the program is run directly with
    /// its arguments, which is what the schema describes).
    pub shell: bool,
    /// Whether the command inherits this process's environment (default `true`); the
    /// request's `env` is applied on top either way.
    pub inherit_env: bool,
    /// How many terminals may be live (created, not released) at once (default 16).
    pub max_terminals: usize,
    /// The output kept when a request has no `outputByteLimit` (default 1 MiB).
    pub default_output_byte_limit: usize,
    /// The most output kept whatever the request asks (default 16 MiB): a bigger
    /// `outputByteLimit` is lowered to this, so the agent sees `truncated: true` earlier.
    pub max_output_byte_limit: usize,
    /// How long, once the command has exited, to wait for the output pipe to close before
    /// publishing the exit status (default 250 ms). Only reached when a descendant that
    /// outlives the command keeps the pipe open.
    pub exit_drain_grace: Duration,
    /// How many symbolic links a `cwd` may go through (default 40).
    pub max_symlink_hops: usize,
    /// Confine the commands with Landlock (default `true`): they may read, write and execute
    /// beneath the roots, use [`Self::system_paths`], and nothing else of the file system
    /// (see [`super::confine`]). [`Terminals::new`](super::Terminals::new) fails when the
    /// kernel cannot enforce this. `false` runs commands with the client's own rights: only
    /// for users who asked for unconfined terminals.
    pub confine: bool,
    /// What confined commands may use outside the roots (default:
    /// [`default_system_paths`]); push to it to grant more, e.g. a tool cache in the home
    /// directory. Paths that do not exist are skipped.
    pub system_paths: Vec<(PathBuf, PathAccess)>,
    /// Accept a ruleset the kernel enforces only partially (default `false`: that is an
    /// error of [`Terminals::new`](super::Terminals::new)).
    pub allow_partial_confinement: bool,
    /// A program (and its first arguments) that starts each command: the command's program
    /// and arguments are appended to it, and it is expected to `exec` them, keeping the pid
    /// (default empty: commands are started directly). `acp client` sets its own
    /// `__exec-child` wrapper, which asks the kernel to kill the command when the client dies
    /// (even by `SIGKILL`). Confined terminals may read and execute the launcher's program.
    /// A command that cannot be found is still refused at `terminal/create`.
    pub launcher: Vec<OsString>,
}

impl Default for TerminalConfig {
    fn default() -> TerminalConfig {
        TerminalConfig {
            roots: Vec::new(),
            default_cwd: None,
            shell: false,
            inherit_env: true,
            max_terminals: 16,
            default_output_byte_limit: 1024 * 1024,
            max_output_byte_limit: 16 * 1024 * 1024,
            exit_drain_grace: Duration::from_millis(250),
            max_symlink_hops: DEFAULT_MAX_HOPS,
            confine: true,
            system_paths: default_system_paths(),
            allow_partial_confinement: false,
            launcher: Vec::new(),
        }
    }
}

impl TerminalConfig {
    /// Commands may run in `roots`; without a `cwd` they run in the first one.
    pub fn new<I>(roots: I) -> TerminalConfig
    where
        I: IntoIterator,
        I::Item: Into<PathBuf>,
    {
        let roots: Vec<PathBuf> = roots.into_iter().map(Into::into).collect();
        TerminalConfig { default_cwd: roots.first().cloned(), roots, ..TerminalConfig::default() }
    }
}
