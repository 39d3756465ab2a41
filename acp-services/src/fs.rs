//! `fs/read_text_file` and `fs/write_text_file`, confined to a set of allowed roots.

use std::fs::Metadata;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use acp_proto::RpcError;
use acp_proto::types::{ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest, WriteTextFileResponse};

use crate::error::{ErrorKind, Failure};
use crate::path::{DEFAULT_MAX_HOPS, Located, Resolved, Roots};

#[cfg(not(unix))]
mod by_path;
#[cfg(unix)]
mod fd;
#[cfg(all(test, unix))]
mod race_tests;

#[cfg(not(unix))]
use by_path::{open_regular, replace};
#[cfg(unix)]
pub(crate) use fd::open_root;
#[cfg(unix)]
use fd::{open_regular, replace};

/// Settings of an [`FsSandbox`].
///
/// `#[non_exhaustive]`: start from [`FsConfig::default()`] and assign the fields to change.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FsConfig {
    /// The most bytes one `fs/read_text_file` answer may carry (default 8 MiB). A bigger file
    /// is refused (`too_large`) unless `line`/`limit` select a slice that fits: slices are
    /// read as a stream, so memory stays bounded by this cap whatever the file size.
    pub max_read_bytes: usize,
    /// Whether `fs/write_text_file` creates missing parent directories (inside a root, since
    /// the whole path is confined) (default `true`). The spec requires creating the file;
    /// agents routinely write `src/new_module/mod.rs` into a directory that does not exist
    /// yet, and refusing would only make them run `mkdir` through a terminal. When `false`, a
    /// missing parent is `-32002`.
    pub create_parent_dirs: bool,
    /// Whether `fs/write_text_file` is served at all (default `true`). A read-only sandbox
    /// answers writes with `-32601` and [`crate::ClientServices`] does not advertise
    /// `fs.writeTextFile`.
    pub writable: bool,
    /// How many symbolic links one path may go through (default 40, as Linux).
    pub max_symlink_hops: usize,
    /// Whether `fs/read_text_file` serves a file that has more than one hard link (default
    /// `false`: refused as `hard_link`). A hard link inside a root can share its bytes with a
    /// file anywhere else on the same filesystem, and nothing in the link says where; set
    /// this when the roots legitimately hold hard-linked files (some build outputs and
    /// package caches do) and their other names are not secret. Writes never write through a
    /// hard link either way: they replace it with a new file. (Unix only: elsewhere the link
    /// count is not checked.)
    pub allow_hard_links: bool,
}

impl Default for FsConfig {
    fn default() -> FsConfig {
        FsConfig {
            max_read_bytes: 8 * 1024 * 1024,
            create_parent_dirs: true,
            writable: true,
            max_symlink_hops: DEFAULT_MAX_HOPS,
            allow_hard_links: false,
        }
    }
}

/// The `fs/*` methods, confined to a set of allowed roots (see the crate docs for the
/// algorithm). Cheap to share: all methods take `&self` and it is `Send + Sync`.
///
/// * Reads: `line` is 1-based (`0` is taken as `1`), `limit` is a maximum number of lines;
///   lines keep their terminators (`\n` or `\r\n`), so slices concatenate back into the file,
///   and a slice starting past the end is empty. The text returned must be UTF-8
///   (`not_utf8` otherwise; with `line`/`limit` only the slice is checked). Only regular
///   files are read: a FIFO would block and a device never ends (`not_a_file`); the file is
///   opened without blocking and checked on its descriptor, so one swapped in after the check
///   is refused too. A file with several hard links is refused (`hard_link`) unless
///   [`FsConfig::allow_hard_links`] is set.
/// * Writes replace the whole file atomically: the content goes to a new temporary file in
///   the same directory, which is then renamed over the target. A reader never sees half a
///   file; a link is never followed at the last moment; and a hard link from inside a root
///   to a file elsewhere is split instead of writing through it. Permissions of an existing
///   file are kept (not its owner, nor set-user-id/set-group-id bits); a read-only file is
///   refused (`permission_denied`), as an editor would. A directory in which new entries
///   cannot be created cannot be written to, even if the file itself is writable.
#[derive(Debug, Clone)]
pub struct FsSandbox {
    roots: Roots,
    config: FsConfig,
}

impl FsSandbox {
    /// A sandbox with the default [`FsConfig`]. Each root must be an absolute path to an
    /// existing directory; it is canonicalized now (an empty set refuses every path).
    pub fn new<I>(roots: I) -> io::Result<FsSandbox>
    where
        I: IntoIterator,
        I::Item: AsRef<Path>,
    {
        FsSandbox::with_config(roots, FsConfig::default())
    }

    /// A sandbox with the given settings.
    pub fn with_config<I>(roots: I, config: FsConfig) -> io::Result<FsSandbox>
    where
        I: IntoIterator,
        I::Item: AsRef<Path>,
    {
        Ok(FsSandbox { roots: Roots::new(roots, config.max_symlink_hops)?, config })
    }

    /// The settings.
    pub fn config(&self) -> &FsConfig {
        &self.config
    }

    /// The allowed roots, canonicalized.
    pub fn roots(&self) -> impl Iterator<Item = &Path> {
        self.roots.canonical()
    }

    /// The canonical path `path` leads to (it may not exist yet), or the refusal. This is the
    /// check both methods start with; a client can use it before showing a diff, say. (The
    /// methods then reopen that path beneath its root's descriptor; a path is only ever a
    /// snapshot, which this answer is too.)
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("acp-services-doc-resolve-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// use acp_services::{ErrorKind, FsSandbox};
    ///
    /// let sandbox = FsSandbox::new([&dir]).unwrap();
    /// let inside = format!("{}/src/../new.txt", dir.display());
    /// assert!(sandbox.resolve(&inside).unwrap().ends_with("new.txt"));
    /// let err = sandbox.resolve(&format!("{}/../x", dir.display())).unwrap_err();
    /// assert_eq!(ErrorKind::of(&err), Some(ErrorKind::PathTraversal));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn resolve(&self, path: &str) -> Result<PathBuf, RpcError> {
        Ok(self.roots.resolve(path)?.path)
    }

    /// Serves `fs/read_text_file`.
    pub fn read_text_file(&self, request: &ReadTextFileRequest) -> Result<ReadTextFileResponse, RpcError> {
        Ok(ReadTextFileResponse::new(self.read(request)?))
    }

    /// Serves `fs/write_text_file`.
    pub fn write_text_file(&self, request: &WriteTextFileRequest) -> Result<WriteTextFileResponse, RpcError> {
        if !self.config.writable {
            return Err(RpcError::method_not_found("fs/write_text_file"));
        }
        self.write(&request.path, request.content.as_bytes())?;
        Ok(WriteTextFileResponse::default())
    }

    fn read(&self, request: &ReadTextFileRequest) -> Result<String, Failure> {
        let raw = request.path.as_str();
        let resolved = self.roots.resolve(raw)?;
        let Some(meta) = &resolved.meta else {
            return Err(Failure::at(ErrorKind::NotFound, raw, format!("file not found: `{raw}`")));
        };
        // What the resolution saw; the descriptor opened next is checked again.
        check_regular(raw, meta)?;
        self.read_resolved(raw, &resolved, request)
    }

    /// Opens what `resolved` names, beneath its root, and reads the slice asked for.
    fn read_resolved(&self, raw: &str, resolved: &Resolved, request: &ReadTextFileRequest) -> Result<String, Failure> {
        let at = self.locate(raw, resolved)?;
        let (file, len) = open_regular(&at, raw, self.config.allow_hard_links)?;
        let cap = self.config.max_read_bytes;
        let whole = request.line.is_none() && request.limit.is_none();
        if whole && len > cap as u64 {
            return Err(too_large(raw, cap));
        }
        // `line` is 1-based; 0 (which the schema's minimum forbids) reads from the start too.
        let first = u64::from(request.line.unwrap_or(1).saturating_sub(1));
        let bytes = match select_lines(BufReader::new(file), first, request.limit.map(u64::from), cap) {
            Ok(bytes) => bytes,
            Err(Selection::TooLarge) => return Err(too_large(raw, cap)),
            Err(Selection::Io(e)) => return Err(Failure::io(raw, "reading", &e)),
        };
        String::from_utf8(bytes).map_err(|e| {
            let at = e.utf8_error().valid_up_to();
            Failure::at(
                ErrorKind::NotUtf8,
                raw,
                format!("`{raw}` is not UTF-8 text (invalid byte at offset {at} of the text read)"),
            )
        })
    }

    fn write(&self, raw: &str, content: &[u8]) -> Result<(), Failure> {
        let resolved = self.roots.resolve(raw)?;
        if let Some(meta) = &resolved.meta {
            check_regular(raw, meta)?;
            if meta.permissions().readonly() {
                return Err(Failure::at(ErrorKind::PermissionDenied, raw, format!("`{raw}` is read-only")));
            }
        }
        if resolved.missing > 1 && !self.config.create_parent_dirs {
            return Err(Failure::at(
                ErrorKind::NotFound,
                raw,
                format!("the parent directory of `{raw}` does not exist"),
            ));
        }
        self.write_resolved(raw, &resolved, content)
    }

    /// Replaces what `resolved` names, beneath its root (see [`fd`]).
    fn write_resolved(&self, raw: &str, resolved: &Resolved, content: &[u8]) -> Result<(), Failure> {
        replace(&self.locate(raw, resolved)?, raw, resolved.missing, content)
    }

    fn locate<'a>(&'a self, raw: &str, resolved: &'a Resolved) -> Result<Located<'a>, Failure> {
        // The resolution only returns paths under a root.
        self.roots.locate(&resolved.path).ok_or_else(|| {
            Failure::at(ErrorKind::Io, raw, format!("`{raw}` resolved to a path under no root (internal error)"))
        })
    }
}

fn check_regular(raw: &str, meta: &Metadata) -> Result<(), Failure> {
    if meta.is_dir() {
        Err(Failure::at(ErrorKind::IsADirectory, raw, format!("`{raw}` is a directory")))
    } else if !meta.is_file() {
        Err(Failure::at(ErrorKind::NotAFile, raw, format!("`{raw}` is not a regular file")))
    } else {
        Ok(())
    }
}

fn too_large(raw: &str, cap: usize) -> Failure {
    Failure::at(
        ErrorKind::TooLarge,
        raw,
        format!("`{raw}` is larger than the {cap}-byte read limit; read it in slices with `line` and `limit`"),
    )
}

/// Why [`select_lines`] stopped.
#[derive(Debug)]
enum Selection {
    TooLarge,
    Io(io::Error),
}

/// Copies lines `first..first + limit` (0-based, terminators included) out of `input`,
/// failing once more than `cap` bytes are selected. Reads as a stream: memory is the output.
fn select_lines<R: BufRead>(mut input: R, first: u64, limit: Option<u64>, cap: usize) -> Result<Vec<u8>, Selection> {
    let end = limit.map(|l| first.saturating_add(l));
    let mut out = Vec::new();
    let mut line = 0u64;
    if end == Some(first) {
        return Ok(out);
    }
    loop {
        let chunk = match input.fill_buf() {
            Ok([]) => return Ok(out),
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Selection::Io(e)),
        };
        let mut used = 0;
        let mut done = false;
        while used < chunk.len() {
            let rest = &chunk[used..];
            let (len, ends_line) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (rest.len(), false),
            };
            if line >= first {
                if out.len() + len > cap {
                    return Err(Selection::TooLarge);
                }
                out.extend_from_slice(&rest[..len]);
            }
            used += len;
            if ends_line {
                line += 1;
                if end == Some(line) {
                    done = true;
                    break;
                }
            }
        }
        input.consume(used);
        if done {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(text: &str, line: Option<u32>, limit: Option<u32>) -> String {
        let first = u64::from(line.unwrap_or(1).saturating_sub(1));
        // A tiny buffer makes lines straddle `fill_buf` chunks.
        let reader = BufReader::with_capacity(3, text.as_bytes());
        String::from_utf8(select_lines(reader, first, limit.map(u64::from), usize::MAX).unwrap()).unwrap()
    }

    #[test]
    fn line_and_limit_select_whole_lines() {
        let text = "one\ntwo\r\nthree\nfour";
        assert_eq!(select(text, None, None), text);
        assert_eq!(select(text, Some(1), None), text);
        assert_eq!(select(text, Some(0), None), text);
        assert_eq!(select(text, Some(2), None), "two\r\nthree\nfour");
        assert_eq!(select(text, Some(2), Some(1)), "two\r\n");
        assert_eq!(select(text, Some(2), Some(2)), "two\r\nthree\n");
        assert_eq!(select(text, Some(4), Some(10)), "four");
        assert_eq!(select(text, Some(5), None), "");
        assert_eq!(select(text, Some(u32::MAX), Some(u32::MAX)), "");
        assert_eq!(select(text, None, Some(0)), "");
        assert_eq!(select(text, None, Some(1)), "one\n");
        assert_eq!(select("", Some(1), Some(1)), "");
        assert_eq!(select("\n\n", Some(2), None), "\n");
    }

    #[test]
    fn the_cap_bounds_the_selection_not_the_file() {
        let text = "a\n".repeat(100);
        let sel = |first, limit, cap| select_lines(text.as_bytes(), first, limit, cap);
        assert!(matches!(sel(0, None, 10), Err(Selection::TooLarge)));
        assert_eq!(sel(50, Some(5), 10).unwrap(), b"a\na\na\na\na\n");
        assert!(matches!(sel(50, Some(6), 10), Err(Selection::TooLarge)));
        assert_eq!(sel(0, None, 200).unwrap().len(), 200);
    }

    #[test]
    fn defaults() {
        let c = FsConfig::default();
        assert!(c.writable && c.create_parent_dirs && !c.allow_hard_links);
        assert_eq!((c.max_read_bytes, c.max_symlink_hops), (8 << 20, 40));
    }
}
