//! Confining paths to a set of allowed roots.
//!
//! [`Roots::resolve`] turns the absolute path of a request into the canonical path the service
//! will actually touch, or refuses it. Steps, in order:
//!
//! 1. **Shape**: non-empty, at most [`MAX_PATH_BYTES`], no NUL byte, absolute.
//! 2. **Lexical check** (no system call): `.` is dropped and `..` removes the previous component;
//!    the result must lie under a root, in its configured or its canonical spelling. Otherwise
//!    `path_traversal` when the part before the first `..` was under a root, else
//!    `outside_roots`.
//! 3. **Physical walk**, component by component from the filesystem root, with POSIX meaning:
//!    each existing component is `lstat`ed; a symbolic link is replaced by its target (an
//!    absolute target restarts from `/`), at most `max_hops` links in total
//!    (`too_many_symlinks`); `..` goes to the parent of the directory reached so far, not of
//!    the text. Once the walk has entered a root, it may pass through the roots' ancestors
//!    (`link -> ../x` goes through the parent) but it must never stand on an existing entry, or
//!    a missing one, outside every root: that is `symlink_escape` when a link was followed,
//!    `path_traversal` otherwise. Nothing under such an entry is ever looked at. A missing
//!    component ends the physical part: what follows cannot be a link, so it is appended as
//!    text (the file to be created, and for writes its missing parents).
//! 4. **Final check**: the walk's result, which contains no symbolic link, must lie under a
//!    root (`symlink_escape` if a link was followed, else `path_traversal`).
//!
//! On non-Windows systems a link target written like a Windows absolute path (`c:/x`, `c:\x`,
//! `\\host\share`) is refused as `symlink_escape` even though the kernel would read it as a
//! relative name: the same tree may be served to a Windows client through a shared folder,
//! and such a name in a link is never legitimate in a sandbox.
//!
//! The walk looks at the tree by path, so it decides *which* file a request means and *why* a
//! request is refused, but it cannot by itself keep the access inside the roots: another
//! process may change the tree after the walk looked (swap a directory for a link, a file for
//! a FIFO or a hard link). Confinement is enforced by what the services do next, on
//! descriptors (`crate::fs`'s `fd` module): each root is opened once, when the [`Roots`] are
//! built ([`Located::dir`]), and the resolved path, which contained no link when it was
//! checked, is reopened *beneath its root's descriptor* with every link refused:
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)` on Linux 5.6 and
//! later, else one `openat(O_NOFOLLOW)` per component from the root's descriptor. A tree
//! changed since the check makes the operation fail (`symlink_escape` for a link that
//! appeared, `not_found` or `not_a_directory` for what went away); it can no longer make it
//! touch anything outside the root. Races now only decide which in-root answer a request
//! gets. A root renamed or replaced after the sandbox was built is still the directory
//! opened then.
//!
//! A link from one root into another stays allowed, as before: the walk resolves it, and the
//! result is reopened beneath the root it lands in ([`Roots::locate`]), never beneath the one
//! the request named.
//!
//! On non-Unix systems the resolved path is reopened by name: there the check-then-use race
//! described above remains.

use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io;
use std::path::{Component, Path, PathBuf};
#[cfg(unix)]
use std::{os::fd::OwnedFd, sync::Arc};

use crate::error::{ErrorKind, Failure};

/// Longest path accepted in a request, in bytes.
pub(crate) const MAX_PATH_BYTES: usize = 16 * 1024;

/// The Linux `MAXSYMLINKS`: how many symbolic links one resolution may follow by default.
pub(crate) const DEFAULT_MAX_HOPS: usize = 40;

/// One allowed root, in the spelling it was configured with and as the OS resolves it, and
/// (on Unix) a descriptor of the directory itself, opened once: every file operation is made
/// relative to it, so the kernel, not a path, decides what lies beneath the root.
#[derive(Debug, Clone)]
struct Root {
    configured: PathBuf,
    canonical: PathBuf,
    #[cfg(unix)]
    dir: Arc<OwnedFd>,
}

/// A resolved path split into the root it lies under and the part below that root.
#[derive(Debug)]
pub(crate) struct Located<'a> {
    /// The root's directory.
    #[cfg(unix)]
    pub(crate) dir: &'a OwnedFd,
    /// The root's canonical path.
    #[cfg_attr(unix, allow(dead_code))]
    pub(crate) root: &'a Path,
    /// The path below the root: only normal components (empty for the root itself).
    pub(crate) below: &'a Path,
}

/// A set of allowed roots and the resolver confining paths to them.
#[derive(Debug, Clone)]
pub(crate) struct Roots {
    roots: Vec<Root>,
    max_hops: usize,
}

/// Where a request's path leads.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// The path to use: absolute, no `.`/`..`, no symbolic link, under a root.
    pub(crate) path: PathBuf,
    /// `lstat` of `path` when it exists (never a symbolic link).
    pub(crate) meta: Option<Metadata>,
    /// How many trailing components of `path` do not exist (0: it exists; 1: its parent does).
    pub(crate) missing: usize,
}

impl Roots {
    /// Canonicalizes each root; each must be an absolute path to an existing directory.
    pub(crate) fn new<I>(roots: I, max_hops: usize) -> io::Result<Roots>
    where
        I: IntoIterator,
        I::Item: AsRef<Path>,
    {
        let mut out = Vec::new();
        for root in roots {
            let root = root.as_ref();
            if !root.is_absolute() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("root `{}` is not an absolute path", root.display()),
                ));
            }
            let canonical = fs::canonicalize(root)?;
            if !fs::metadata(&canonical)?.is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("root `{}` is not a directory", root.display()),
                ));
            }
            #[cfg(unix)]
            let dir = Arc::new(crate::fs::open_root(&canonical)?);
            out.push(Root {
                configured: lexical(root),
                canonical,
                #[cfg(unix)]
                dir,
            });
        }
        Ok(Roots { roots: out, max_hops })
    }

    /// The roots, canonicalized.
    pub(crate) fn canonical(&self) -> impl Iterator<Item = &Path> {
        self.roots.iter().map(|r| r.canonical.as_path())
    }

    /// The root `path` (a [`Resolved::path`]) lies under, and the rest of it. When roots nest,
    /// the deepest one is used.
    pub(crate) fn locate<'a>(&'a self, path: &'a Path) -> Option<Located<'a>> {
        let under = |r: &'a Root, base: &'a Path| {
            path.strip_prefix(base).ok().map(|below| (base.components().count(), r, base, below))
        };
        let (_, root, base, below) = self
            .roots
            .iter()
            .filter_map(|r| under(r, &r.canonical).or_else(|| under(r, &r.configured)))
            .max_by_key(|(depth, ..)| *depth)?;
        #[cfg(not(unix))]
        let _ = root;
        Some(Located {
            #[cfg(unix)]
            dir: &root.dir,
            root: base,
            below,
        })
    }

    fn inside(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| path.starts_with(&r.canonical) || path.starts_with(&r.configured))
    }

    /// Whether `path` is a proper ancestor of a root: a place a walk may pass through.
    fn above(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| r.canonical.starts_with(path) || r.configured.starts_with(path))
    }

    /// Confines `raw` (see the module docs).
    pub(crate) fn resolve(&self, raw: &str) -> Result<Resolved, Failure> {
        check_shape(raw)?;
        let path = Path::new(raw);
        self.check_lexically(raw, path)?;
        let resolved = self.walk(raw, path)?;
        Ok(resolved)
    }

    fn check_lexically(&self, raw: &str, path: &Path) -> Result<(), Failure> {
        if self.inside(&lexical(path)) {
            return Ok(());
        }
        let before_parent: PathBuf = path.components().take_while(|c| *c != Component::ParentDir).collect();
        let has_parent = path.components().any(|c| c == Component::ParentDir);
        if has_parent && self.inside(&lexical(&before_parent)) {
            Err(Failure::at(ErrorKind::PathTraversal, raw, format!("`..` in `{raw}` leaves the allowed roots")))
        } else {
            Err(Failure::at(ErrorKind::OutsideRoots, raw, format!("`{raw}` is outside the allowed roots")))
        }
    }

    fn walk(&self, raw: &str, path: &Path) -> Result<Resolved, Failure> {
        // Components still to visit, the next one last.
        let mut todo: Vec<Step> = path.components().rev().map(Step::from).collect();
        let mut here = PathBuf::new();
        let mut missing = 0usize;
        let mut hops = 0usize;
        let mut entered = false;
        let mut followed = false;
        while let Some(step) = todo.pop() {
            match step {
                Step::Prefix(prefix) => {
                    here = PathBuf::from(prefix);
                    missing = 0;
                    continue;
                }
                Step::RootDir => {
                    // Keep the drive of the walk (Windows); on Unix this is plain `/`.
                    let mut base = match here.components().next() {
                        Some(prefix @ Component::Prefix(_)) => PathBuf::from(prefix.as_os_str()),
                        _ => PathBuf::new(),
                    };
                    base.push(Component::RootDir.as_os_str());
                    here = base;
                    missing = 0;
                    continue;
                }
                Step::Current => continue,
                Step::Parent => {
                    here.pop();
                    missing = missing.saturating_sub(1);
                }
                Step::Name(name) => {
                    let candidate = here.join(&name);
                    if missing > 0 {
                        here = candidate;
                        missing += 1;
                    } else {
                        match fs::symlink_metadata(&candidate) {
                            Ok(meta) if meta.file_type().is_symlink() => {
                                hops += 1;
                                let target = self.read_link(raw, &candidate, hops)?;
                                followed = true;
                                // An absolute target starts with its own root (and prefix) step.
                                todo.extend(target.components().rev().map(Step::from));
                                // `here` is unchanged (the link's directory): nothing new to check.
                                continue;
                            }
                            Ok(_) => here = candidate,
                            Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
                                here = candidate;
                                missing = 1;
                            }
                            Err(e) => return Err(Failure::io(raw, "looking up", &e)),
                        }
                    }
                }
            }
            if self.inside(&here) {
                entered = true;
            } else if entered && !self.above(&here) {
                return Err(escape(raw, followed, &here));
            }
        }
        if !self.inside(&here) {
            return Err(escape(raw, followed, &here));
        }
        let meta = if missing == 0 { final_meta(raw, &here)? } else { None };
        if meta.is_none() {
            missing = missing.max(1);
        }
        Ok(Resolved { path: here, meta, missing })
    }

    /// The target of the `hops`-th link followed, `candidate`.
    fn read_link(&self, raw: &str, candidate: &Path, hops: usize) -> Result<PathBuf, Failure> {
        if hops > self.max_hops {
            return Err(Failure::at(
                ErrorKind::TooManySymlinks,
                raw,
                format!("resolving `{raw}` follows more than {} symbolic links", self.max_hops),
            ));
        }
        let target = fs::read_link(candidate).map_err(|e| {
            if e.kind() == io::ErrorKind::InvalidInput {
                // No longer a link: replaced since it was looked up.
                changed(raw)
            } else {
                Failure::io(raw, "reading the link", &e)
            }
        })?;
        if looks_foreign_absolute(&target) {
            return Err(escape(raw, true, &target));
        }
        Ok(target)
    }
}

/// The refusal for a walk that reached `at`, outside the roots.
fn escape(raw: &str, followed: bool, at: &Path) -> Failure {
    if followed {
        Failure::at(
            ErrorKind::SymlinkEscape,
            raw,
            format!("a symbolic link in `{raw}` leads outside the allowed roots (to `{}`)", at.display()),
        )
    } else {
        Failure::at(ErrorKind::PathTraversal, raw, format!("`{raw}` leaves the allowed roots"))
    }
}

/// `lstat` of the walk's result (`None`: it vanished meanwhile).
fn final_meta(raw: &str, here: &Path) -> Result<Option<Metadata>, Failure> {
    match fs::symlink_metadata(here) {
        Ok(meta) if meta.file_type().is_symlink() => Err(changed(raw)),
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Failure::io(raw, "looking up", &e)),
    }
}

/// The refusal when the tree changes under the walk.
fn changed(raw: &str) -> Failure {
    Failure::at(ErrorKind::SymlinkEscape, raw, format!("`{raw}` changed while resolving"))
}

/// One component still to visit.
enum Step {
    /// A Windows prefix (`C:`): restart there.
    Prefix(OsString),
    /// The root directory: restart at the root of the current prefix.
    RootDir,
    Current,
    Parent,
    Name(OsString),
}

impl From<Component<'_>> for Step {
    fn from(c: Component<'_>) -> Step {
        match c {
            Component::Prefix(p) => Step::Prefix(p.as_os_str().to_owned()),
            Component::RootDir => Step::RootDir,
            Component::CurDir => Step::Current,
            Component::ParentDir => Step::Parent,
            Component::Normal(n) => Step::Name(n.to_owned()),
        }
    }
}

/// `path` with `.` dropped and `..` applied to the text (never above the root).
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn check_shape(raw: &str) -> Result<(), Failure> {
    let bad = |why: &str| Failure::at(ErrorKind::InvalidPath, raw, format!("invalid path: {why}"));
    if raw.is_empty() {
        return Err(bad("empty"));
    }
    if raw.len() > MAX_PATH_BYTES {
        return Err(bad(&format!("longer than {MAX_PATH_BYTES} bytes")));
    }
    if raw.contains('\0') {
        return Err(bad("contains a NUL byte"));
    }
    if !Path::new(raw).is_absolute() {
        return Err(Failure::at(ErrorKind::NotAbsolute, raw, format!("`{raw}` is not an absolute path")));
    }
    Ok(())
}

/// A link target that would be absolute on Windows (`c:/x`, `c:\x`, `\\host\share`,
/// `//host/share` is absolute everywhere anyway). Windows itself resolves these natively.
#[cfg(not(windows))]
fn looks_foreign_absolute(target: &Path) -> bool {
    let bytes = target.as_os_str().as_encoded_bytes();
    let drive =
        bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && matches!(bytes[2], b'/' | b'\\');
    drive || bytes.starts_with(b"\\\\")
}

#[cfg(windows)]
fn looks_foreign_absolute(_: &Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_normalization() {
        assert_eq!(lexical(Path::new("/a/./b/../c")), Path::new("/a/c"));
        assert_eq!(lexical(Path::new("/../../x")), Path::new("/x"));
        assert_eq!(lexical(Path::new("/a/b/..")), Path::new("/a"));
        assert_eq!(lexical(Path::new("//a//b/")), Path::new("/a/b"));
    }

    #[test]
    fn shapes_are_checked_before_anything_else() {
        let kind = |p: &str| check_shape(p).err().map(|f| f.kind);
        assert_eq!(kind(""), Some(ErrorKind::InvalidPath));
        assert_eq!(kind("/a\0b"), Some(ErrorKind::InvalidPath));
        assert_eq!(kind(&format!("/{}", "a".repeat(MAX_PATH_BYTES))), Some(ErrorKind::InvalidPath));
        assert_eq!(kind("a/b"), Some(ErrorKind::NotAbsolute));
        assert_eq!(kind("./a"), Some(ErrorKind::NotAbsolute));
        #[cfg(unix)]
        assert_eq!(kind("/a/b"), None);
    }

    #[cfg(unix)]
    #[test]
    fn foreign_absolute_targets() {
        assert!(looks_foreign_absolute(Path::new("c:/outside")));
        assert!(looks_foreign_absolute(Path::new("Z:\\outside")));
        assert!(looks_foreign_absolute(Path::new("\\\\host\\share")));
        assert!(!looks_foreign_absolute(Path::new("c:")));
        assert!(!looks_foreign_absolute(Path::new("data")));
        assert!(!looks_foreign_absolute(Path::new("a:b")));
    }

    #[test]
    fn relative_roots_are_refused() {
        let err = Roots::new(["relative/root"], DEFAULT_MAX_HOPS).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }

    #[cfg(unix)]
    #[test]
    fn lexical_check_runs_before_the_walk() {
        // No root exists under `/nonexistent`, but the lexical check needs no system call.
        let roots = Roots {
            roots: vec![Root {
                configured: "/r".into(),
                canonical: "/r".into(),
                dir: Arc::new(crate::fs::open_root(Path::new("/")).unwrap()),
            }],
            max_hops: 40,
        };
        let kind = |p: &str| roots.resolve(p).err().map(|f| f.kind);
        assert_eq!(kind("/r/../etc/passwd"), Some(ErrorKind::PathTraversal));
        assert_eq!(kind("/r/a/../../x"), Some(ErrorKind::PathTraversal));
        assert_eq!(kind("/etc/passwd"), Some(ErrorKind::OutsideRoots));
        assert_eq!(kind("/etc/../etc/passwd"), Some(ErrorKind::OutsideRoots));
        assert_eq!(kind("/rx/y"), Some(ErrorKind::OutsideRoots));
        // `/r` itself does not exist here, so the walk reports the path missing, not refused.
        let resolved = roots.resolve("/r/a/../b").unwrap();
        assert_eq!((resolved.path.as_path(), resolved.missing), (Path::new("/r/b"), 2));
    }

    #[test]
    fn an_empty_root_set_refuses_everything() {
        let roots = Roots::new(Vec::<PathBuf>::new(), DEFAULT_MAX_HOPS).unwrap();
        let root = std::env::temp_dir();
        let err = roots.resolve(&root.to_string_lossy()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::OutsideRoots);
        assert_eq!(roots.canonical().count(), 0);
    }
}
