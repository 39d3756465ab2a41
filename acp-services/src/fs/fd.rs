//! The sandbox's file operations on descriptors (Unix): nothing here names a file by a global
//! path.
//!
//! Each root is opened once ([`open_root`]); a resolved path is reopened *relative to that
//! descriptor* ([`open_beneath`]): on Linux with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS)`, elsewhere (or on a kernel older than 5.6) by
//! a walk of `openat(O_NOFOLLOW)` calls, one directory descriptor per component. The path
//! resolver ([`crate::path`]) has already replaced every symbolic link by its target, so the
//! path reopened here contains none: meeting one now means the tree changed since the check,
//! and the open fails instead of following it. Either way the kernel never leaves the root.
//!
//! Reads open with `O_NONBLOCK` (a FIFO swapped in cannot block the open) and check the
//! descriptor with `fstat`. Writes hold the parent directory's descriptor: missing parents are
//! made with `mkdirat` and entered with `openat(O_NOFOLLOW)`, the temporary file is created
//! with `openat(O_CREAT | O_EXCL)` and renamed with `renameat`, all inside that descriptor.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};
use rustix::io::Errno;

use crate::error::{ErrorKind, Failure};
use crate::path::Located;

/// A directory opened only to anchor `*at` calls.
#[cfg(any(target_os = "linux", target_os = "android"))]
const DIR: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const DIR: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);

/// A file opened for reading: never blocks on a FIFO, never follows a final link, never
/// becomes the controlling terminal.
const READ: OFlags =
    OFlags::RDONLY.union(OFlags::NONBLOCK).union(OFlags::NOFOLLOW).union(OFlags::NOCTTY).union(OFlags::CLOEXEC);

/// The temporary file of a write: a new entry, never a link.
const CREATE: OFlags =
    OFlags::WRONLY.union(OFlags::CREATE).union(OFlags::EXCL).union(OFlags::NOFOLLOW).union(OFlags::CLOEXEC);

/// Opens a root directory (its canonical path, from the configuration) once, for good.
pub(crate) fn open_root(path: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(path, DIR, Mode::empty())?)
}

/// Opens `below` (normal components only; empty for `dir` itself) beneath `dir`, following
/// no symbolic link at all.
pub(crate) fn open_beneath(dir: BorrowedFd<'_>, below: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if openat2::available() {
        match openat2::open(dir, below, flags) {
            Err(Errno::NOSYS) => openat2::unavailable(),
            done => return done,
        }
    }
    walk_beneath(dir, below, flags)
}

/// `openat2` where the kernel has it (Linux 5.6).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) mod openat2 {
    use std::os::fd::{BorrowedFd, OwnedFd};
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};

    use rustix::fs::{Mode, OFlags, ResolveFlags};
    use rustix::io::Errno;

    static MISSING: AtomicBool = AtomicBool::new(false);

    /// How often a lookup disturbed by a concurrent rename (`EAGAIN`) is retried.
    const RETRIES: usize = 16;

    #[cfg(test)]
    thread_local! {
        /// Makes this thread take the fallback walk, as on a kernel without `openat2`.
        pub(crate) static FORCE_WALK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    pub(super) fn available() -> bool {
        #[cfg(test)]
        if FORCE_WALK.with(std::cell::Cell::get) {
            return false;
        }
        !MISSING.load(Ordering::Relaxed)
    }

    pub(super) fn unavailable() {
        MISSING.store(true, Ordering::Relaxed);
    }

    pub(super) fn open(dir: BorrowedFd<'_>, below: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
        let path = if below.as_os_str().is_empty() { Path::new(".") } else { below };
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS | ResolveFlags::NO_SYMLINKS;
        let mut tries = 0;
        loop {
            // No O_NOFOLLOW: with O_PATH it would open a final link itself, where
            // RESOLVE_NO_SYMLINKS refuses it (ELOOP) like every other link.
            match rustix::fs::openat2(dir, path, flags, Mode::empty(), resolve) {
                Err(Errno::AGAIN) if tries < RETRIES => tries += 1,
                done => return done,
            }
        }
    }
}

/// The portable way: one `openat(O_NOFOLLOW)` per component, each relative to the previous
/// directory's descriptor.
pub(crate) fn walk_beneath(dir: BorrowedFd<'_>, below: &Path, flags: OFlags) -> Result<OwnedFd, Errno> {
    let names = names(below)?;
    let Some((last, parents)) = names.split_last() else {
        return rustix::fs::openat(dir, ".", flags, Mode::empty());
    };
    let mut here: Option<OwnedFd> = None;
    for name in parents {
        let at = here.as_ref().map_or(dir, AsFd::as_fd);
        let next = open_no_follow(at, name, DIR)?;
        here = Some(next);
    }
    let at = here.as_ref().map_or(dir, AsFd::as_fd);
    open_no_follow(at, last, flags)
}

/// `openat(O_NOFOLLOW)`, failing with `ELOOP` on a link also where `O_DIRECTORY` (or
/// `O_PATH`) would make it `ENOTDIR`.
fn open_no_follow(dir: BorrowedFd<'_>, name: &OsStr, flags: OFlags) -> Result<OwnedFd, Errno> {
    match rustix::fs::openat(dir, name, flags | OFlags::NOFOLLOW, Mode::empty()) {
        Err(Errno::NOTDIR) if is_link(dir, name) => Err(Errno::LOOP),
        done => done,
    }
}

fn is_link(dir: BorrowedFd<'_>, name: &OsStr) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink)
}

/// The components of a path below a root; anything but a plain name is refused.
fn names(below: &Path) -> Result<Vec<&OsStr>, Errno> {
    below
        .components()
        .map(|c| match c {
            Component::Normal(name) => Ok(name),
            _ => Err(Errno::INVAL),
        })
        .collect()
}

/// The refusal for a failed descriptor operation on `raw`.
fn failure(raw: &str, what: &str, errno: Errno) -> Failure {
    if errno == Errno::XDEV || errno == Errno::LOOP || errno == Errno::MLINK {
        // XDEV: the lookup would leave the root; LOOP (MLINK on some BSDs): a link where the
        // resolution saw none. Both mean the tree changed under the check.
        Failure::at(
            ErrorKind::SymlinkEscape,
            raw,
            format!("`{raw}` changed after it was checked ({what}: a symbolic link appeared on the way)"),
        )
    } else {
        Failure::io(raw, what, &io::Error::from(errno))
    }
}

/// `Err` for what is not a regular file.
fn check_regular(raw: &str, stat: &Stat) -> Result<(), Failure> {
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => Ok(()),
        FileType::Directory => Err(Failure::at(ErrorKind::IsADirectory, raw, format!("`{raw}` is a directory"))),
        FileType::Symlink => {
            Err(Failure::at(ErrorKind::SymlinkEscape, raw, format!("`{raw}` changed while resolving")))
        }
        _ => Err(Failure::at(ErrorKind::NotAFile, raw, format!("`{raw}` is not a regular file"))),
    }
}

fn root_dir<'a>(at: &Located<'a>) -> BorrowedFd<'a> {
    at.dir.as_fd()
}

/// Opens the regular file `at` for reading; returns it and its size.
pub(crate) fn open_regular(at: &Located<'_>, raw: &str, allow_hard_links: bool) -> Result<(File, u64), Failure> {
    let fd = open_beneath(root_dir(at), at.below, READ).map_err(|e| failure(raw, "opening", e))?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| failure(raw, "inspecting", e))?;
    check_regular(raw, &stat)?;
    if !allow_hard_links && stat.st_nlink > 1 {
        return Err(Failure::at(
            ErrorKind::HardLink,
            raw,
            format!("`{raw}` has other hard links, which may lie outside the allowed roots; it is not read"),
        ));
    }
    // Regular files ignore O_NONBLOCK; clear it anyway so that reads are plain blocking reads.
    rustix::fs::fcntl_setfl(&fd, OFlags::empty()).map_err(|e| failure(raw, "opening", e))?;
    Ok((File::from(fd), u64::try_from(stat.st_size).unwrap_or(0)))
}

/// Replaces the file `at` (whose last `missing` components do not exist) with `content`,
/// creating the missing parent directories.
pub(crate) fn replace(at: &Located<'_>, raw: &str, missing: usize, content: &[u8]) -> Result<(), Failure> {
    let invalid = |e| failure(raw, "resolving", e);
    let names = names(at.below).map_err(invalid)?;
    let Some((name, parents)) = names.split_last() else {
        return Err(Failure::at(ErrorKind::IsADirectory, raw, format!("`{raw}` is a directory")));
    };
    let to_create = missing.saturating_sub(1).min(parents.len());
    let (existing, new) = parents.split_at(parents.len() - to_create);
    let existing: PathBuf = existing.iter().collect();
    let mut dir =
        open_beneath(root_dir(at), &existing, DIR).map_err(|e| failure(raw, "opening the directory of", e))?;
    for part in new {
        dir = make_dir(dir.as_fd(), part).map_err(|e| failure(raw, "creating the parent directories of", e))?;
    }
    write_in(dir.as_fd(), name, raw, content)
}

/// Creates the directory `name` in `dir` (or finds it there) and opens it.
fn make_dir(dir: BorrowedFd<'_>, name: &OsStr) -> Result<OwnedFd, Errno> {
    match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o777)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e),
    }
    open_no_follow(dir, name, DIR)
}

/// Writes `content` to a fresh file in `dir`, then renames it to `name` in the same `dir`.
fn write_in(dir: BorrowedFd<'_>, name: &OsStr, raw: &str, content: &[u8]) -> Result<(), Failure> {
    let existing = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Some(stat),
        Err(Errno::NOENT) => None,
        Err(e) => return Err(failure(raw, "looking up", e)),
    };
    let mut mode = Mode::from_raw_mode(0o666);
    if let Some(stat) = &existing {
        check_regular(raw, stat)?;
        let old = Mode::from_raw_mode(stat.st_mode);
        if !old.intersects(Mode::WUSR | Mode::WGRP | Mode::WOTH) {
            return Err(Failure::at(ErrorKind::PermissionDenied, raw, format!("`{raw}` is read-only")));
        }
        // Not set-user-id nor set-group-id: the new file belongs to this process.
        mode = old & (Mode::RWXU | Mode::RWXG | Mode::RWXO | Mode::SVTX);
    }
    let (tmp, file) = create_temporary(dir, mode).map_err(|e| failure(raw, "creating a temporary file to write", e))?;
    let written = fill_and_rename(file, existing.is_some().then_some(mode), content, dir, &tmp, name);
    written.map_err(|e| {
        let _ = rustix::fs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
        Failure::io(raw, "writing", &e)
    })
}

/// Creates `.acp-write-<pid>-<n>.tmp` in `dir`, a name nobody else has.
fn create_temporary(dir: BorrowedFd<'_>, mode: Mode) -> Result<(String, File), Errno> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = format!(".acp-write-{}-{n}.tmp", std::process::id());
        match rustix::fs::openat(dir, tmp.as_str(), CREATE, mode) {
            Ok(fd) => return Ok((tmp, File::from(fd))),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e),
        }
    }
}

fn fill_and_rename(
    mut file: File,
    chmod: Option<Mode>,
    content: &[u8],
    dir: BorrowedFd<'_>,
    tmp: &str,
    name: &OsStr,
) -> io::Result<()> {
    if let Some(mode) = chmod {
        // The mode given to `openat` went through the umask; the old file's did not.
        rustix::fs::fchmod(&file, mode)?;
    }
    file.write_all(content)?;
    file.flush()?;
    drop(file);
    Ok(rustix::fs::renameat(dir, tmp, dir, name)?)
}
