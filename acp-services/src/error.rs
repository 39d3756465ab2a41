//! The machine-readable reasons a service refuses a request.
//!
//! Every refusal is an [`RpcError`] built with acp-proto's constructors, so `data.reason` holds
//! a readable sentence. This crate adds `data.kind`, one of the snake_case names of
//! [`ErrorKind`], and `data.path` when a path was involved:
//!
//! ```json
//! {"code": -32602, "message": "Invalid params",
//!  "data": {"reason": "symlink `/w/link` leads outside the allowed roots",
//!           "kind": "symlink_escape", "path": "/w/link"}}
//! ```

use std::fmt;
use std::io;

use acp_proto::{ErrorCode, RpcError};
use serde_json::Value;

/// Why a service refused a request; sent as `data.kind` of the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `invalid_path` (`-32602`): empty, too long, or containing a NUL byte.
    InvalidPath,
    /// `not_absolute` (`-32602`): ACP requires absolute paths.
    NotAbsolute,
    /// `path_traversal` (`-32602`): `..` components climb out of the allowed roots.
    PathTraversal,
    /// `outside_roots` (`-32602`): the path is not under any allowed root.
    OutsideRoots,
    /// `symlink_escape` (`-32602`): following a symbolic link leaves the allowed roots.
    SymlinkEscape,
    /// `too_many_symlinks` (`-32602`): more links than the hop cap (a cycle, usually).
    TooManySymlinks,
    /// `not_found` (`-32002`): the file (or the working directory) does not exist.
    NotFound,
    /// `is_a_directory` (`-32602`): a file operation named a directory.
    IsADirectory,
    /// `not_a_directory` (`-32602`): a path component, or a working directory, is not a
    /// directory.
    NotADirectory,
    /// `not_a_file` (`-32602`): a FIFO, socket or device; never opened.
    NotAFile,
    /// `not_utf8` (`-32602`): the text read is not valid UTF-8.
    NotUtf8,
    /// `too_large` (`-32602`): the text read exceeds the configured read cap.
    TooLarge,
    /// `permission_denied` (`-32602`): the OS refused access, or the file is read-only.
    PermissionDenied,
    /// `io_error` (`-32603`): any other I/O failure.
    Io,
    /// `invalid_command` (`-32602`): an empty command, or a NUL byte in it or its arguments.
    InvalidCommand,
    /// `invalid_env` (`-32602`): an environment variable name that is empty or contains `=`,
    /// or a NUL byte in a name or value.
    InvalidEnv,
    /// `no_working_directory` (`-32602`): no `cwd` given and no default configured.
    NoWorkingDirectory,
    /// `command_not_found` (`-32002`): the program to run does not exist.
    CommandNotFound,
    /// `spawn_failed` (`-32603`): the OS could not start the command.
    SpawnFailed,
    /// `too_many_terminals` (`-32603`): the cap on live terminals is reached; release one.
    TooManyTerminals,
    /// `unknown_terminal` (`-32002`): no such terminal in this session (or it was released).
    UnknownTerminal,
    /// `hard_link` (`-32602`): the file has more than one hard link, so the same bytes may
    /// also live outside the allowed roots; reads refuse it unless
    /// [`FsConfig::allow_hard_links`](crate::FsConfig::allow_hard_links) is set. (Writes
    /// replace the link with a new file instead of writing through it.)
    HardLink,
    /// `forbidden_env` (`-32602`): the request's `env` sets a variable of the dynamic loader
    /// (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `LD_AUDIT`, any `LD_*`, `GLIBC_TUNABLES`, `DYLD_*`).
    ForbiddenEnv,
    /// `shut_down` (`-32603`): the terminals were shut down (the client is going away); no
    /// new terminal, and no exit status for a command that never published one.
    ShutDown,
}

impl ErrorKind {
    const ALL: [ErrorKind; 24] = [
        ErrorKind::InvalidPath,
        ErrorKind::NotAbsolute,
        ErrorKind::PathTraversal,
        ErrorKind::OutsideRoots,
        ErrorKind::SymlinkEscape,
        ErrorKind::TooManySymlinks,
        ErrorKind::NotFound,
        ErrorKind::IsADirectory,
        ErrorKind::NotADirectory,
        ErrorKind::NotAFile,
        ErrorKind::NotUtf8,
        ErrorKind::TooLarge,
        ErrorKind::PermissionDenied,
        ErrorKind::Io,
        ErrorKind::InvalidCommand,
        ErrorKind::InvalidEnv,
        ErrorKind::NoWorkingDirectory,
        ErrorKind::CommandNotFound,
        ErrorKind::SpawnFailed,
        ErrorKind::TooManyTerminals,
        ErrorKind::UnknownTerminal,
        ErrorKind::HardLink,
        ErrorKind::ForbiddenEnv,
        ErrorKind::ShutDown,
    ];

    /// The name sent as `data.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidPath => "invalid_path",
            ErrorKind::NotAbsolute => "not_absolute",
            ErrorKind::PathTraversal => "path_traversal",
            ErrorKind::OutsideRoots => "outside_roots",
            ErrorKind::SymlinkEscape => "symlink_escape",
            ErrorKind::TooManySymlinks => "too_many_symlinks",
            ErrorKind::NotFound => "not_found",
            ErrorKind::IsADirectory => "is_a_directory",
            ErrorKind::NotADirectory => "not_a_directory",
            ErrorKind::NotAFile => "not_a_file",
            ErrorKind::NotUtf8 => "not_utf8",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::Io => "io_error",
            ErrorKind::InvalidCommand => "invalid_command",
            ErrorKind::InvalidEnv => "invalid_env",
            ErrorKind::NoWorkingDirectory => "no_working_directory",
            ErrorKind::CommandNotFound => "command_not_found",
            ErrorKind::SpawnFailed => "spawn_failed",
            ErrorKind::TooManyTerminals => "too_many_terminals",
            ErrorKind::UnknownTerminal => "unknown_terminal",
            ErrorKind::HardLink => "hard_link",
            ErrorKind::ForbiddenEnv => "forbidden_env",
            ErrorKind::ShutDown => "shut_down",
        }
    }

    /// The JSON-RPC code errors of this kind carry.
    pub fn code(self) -> ErrorCode {
        match self {
            ErrorKind::NotFound | ErrorKind::CommandNotFound | ErrorKind::UnknownTerminal => {
                ErrorCode::RESOURCE_NOT_FOUND
            }
            ErrorKind::Io | ErrorKind::SpawnFailed | ErrorKind::TooManyTerminals | ErrorKind::ShutDown => {
                ErrorCode::INTERNAL_ERROR
            }
            _ => ErrorCode::INVALID_PARAMS,
        }
    }

    /// Whether this kind is a sandbox violation: the request named something outside the
    /// allowed roots (as opposed to something merely missing or unreadable).
    pub fn is_violation(self) -> bool {
        matches!(
            self,
            ErrorKind::NotAbsolute
                | ErrorKind::PathTraversal
                | ErrorKind::OutsideRoots
                | ErrorKind::SymlinkEscape
                | ErrorKind::TooManySymlinks
        )
    }

    /// Parses a `data.kind` name.
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The kind of an error produced by this crate (read back from `data.kind`).
    ///
    /// ```
    /// use acp_services::{ErrorKind, FsSandbox};
    /// use acp_proto::types::ReadTextFileRequest;
    ///
    /// let sandbox = FsSandbox::new([std::env::temp_dir()]).unwrap();
    /// let err = sandbox.read_text_file(&ReadTextFileRequest::new("s", "relative.txt")).unwrap_err();
    /// assert_eq!(err.code.0, -32602);
    /// assert_eq!(ErrorKind::of(&err), Some(ErrorKind::NotAbsolute));
    /// ```
    pub fn of(error: &RpcError) -> Option<ErrorKind> {
        ErrorKind::from_name(error.data.as_ref()?.get("kind")?.as_str()?)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal on its way to becoming an [`RpcError`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    pub(crate) kind: ErrorKind,
    pub(crate) reason: String,
    pub(crate) path: Option<String>,
}

impl Failure {
    pub(crate) fn new(kind: ErrorKind, reason: impl Into<String>) -> Failure {
        Failure { kind, reason: reason.into(), path: None }
    }

    pub(crate) fn at(kind: ErrorKind, path: &str, reason: impl Into<String>) -> Failure {
        Failure { kind, reason: reason.into(), path: Some(path.to_owned()) }
    }

    /// Classifies an I/O error met while working on `path`.
    pub(crate) fn io(path: &str, what: &str, error: &io::Error) -> Failure {
        let kind = match error.kind() {
            io::ErrorKind::NotFound => ErrorKind::NotFound,
            io::ErrorKind::PermissionDenied => ErrorKind::PermissionDenied,
            io::ErrorKind::NotADirectory => ErrorKind::NotADirectory,
            io::ErrorKind::IsADirectory => ErrorKind::IsADirectory,
            io::ErrorKind::InvalidFilename => ErrorKind::InvalidPath,
            _ => ErrorKind::Io,
        };
        Failure::at(kind, path, format!("{what} `{path}`: {error}"))
    }
}

impl From<Failure> for RpcError {
    fn from(f: Failure) -> RpcError {
        let mut error = match f.kind.code() {
            ErrorCode::RESOURCE_NOT_FOUND => RpcError::resource_not_found(f.reason),
            ErrorCode::INTERNAL_ERROR => RpcError::internal_error(f.reason),
            _ => RpcError::invalid_params(f.reason),
        };
        if let Some(Value::Object(data)) = error.data.as_mut() {
            data.insert("kind".into(), Value::String(f.kind.as_str().to_owned()));
            if let Some(path) = f.path {
                data.insert("path".into(), Value::String(path));
            }
        }
        error
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_round_trip_and_codes_match() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.as_str()), Some(kind));
            let rpc = RpcError::from(Failure::new(kind, "why"));
            assert_eq!(rpc.code, kind.code());
            assert_eq!(ErrorKind::of(&rpc), Some(kind));
            assert_eq!(rpc.reason(), Some("why"));
        }
        assert_eq!(ErrorKind::from_name("nope"), None);
    }

    #[test]
    fn data_carries_reason_kind_and_path() {
        let rpc = RpcError::from(Failure::at(ErrorKind::SymlinkEscape, "/w/l", "escapes"));
        assert_eq!(
            serde_json::to_value(&rpc).unwrap(),
            json!({"code": -32602, "message": "Invalid params",
                   "data": {"reason": "escapes", "kind": "symlink_escape", "path": "/w/l"}})
        );
        assert_eq!(RpcError::from(Failure::new(ErrorKind::NotFound, "gone")).code.0, -32002);
        assert_eq!(ErrorKind::of(&RpcError::invalid_params("plain")), None);
    }

    #[test]
    fn io_errors_are_classified() {
        let e = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(Failure::io("/x", "reading", &e).kind, ErrorKind::NotFound);
        let e = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(Failure::io("/x", "reading", &e).kind, ErrorKind::PermissionDenied);
        let e = io::Error::other("disk on fire");
        let f = Failure::io("/x", "reading", &e);
        assert_eq!((f.kind, f.path.as_deref()), (ErrorKind::Io, Some("/x")));
    }
}
