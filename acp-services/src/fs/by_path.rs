//! The sandbox's file operations by path, where descriptor-relative calls are not available
//! (non-Unix systems). The resolved path is reopened by name: a concurrent change of the tree
//! between the check and the use is not ruled out here (see the crate docs).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{ErrorKind, Failure};
use crate::path::Located;

/// Opens the regular file `at` for reading; returns it and its size. Hard links cannot be
/// counted portably here, so `allow_hard_links` is not checked.
pub(crate) fn open_regular(at: &Located<'_>, raw: &str, _allow_hard_links: bool) -> Result<(File, u64), Failure> {
    let path = at.root.join(at.below);
    let file = File::open(&path).map_err(|e| Failure::io(raw, "opening", &e))?;
    let meta = file.metadata().map_err(|e| Failure::io(raw, "inspecting", &e))?;
    if meta.is_dir() {
        return Err(Failure::at(ErrorKind::IsADirectory, raw, format!("`{raw}` is a directory")));
    }
    if !meta.is_file() {
        return Err(Failure::at(ErrorKind::NotAFile, raw, format!("`{raw}` is not a regular file")));
    }
    Ok((file, meta.len()))
}

/// Replaces the file `at` with `content`, creating the missing parent directories.
pub(crate) fn replace(at: &Located<'_>, raw: &str, missing: usize, content: &[u8]) -> Result<(), Failure> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let target = at.root.join(at.below);
    let dir =
        target.parent().ok_or_else(|| Failure::at(ErrorKind::IsADirectory, raw, format!("`{raw}` is a directory")))?;
    if missing > 1 {
        fs::create_dir_all(dir).map_err(|e| Failure::io(raw, "creating the parent directories of", &e))?;
    }
    let existing = fs::symlink_metadata(&target).ok();
    if let Some(meta) = &existing {
        if meta.permissions().readonly() {
            return Err(Failure::at(ErrorKind::PermissionDenied, raw, format!("`{raw}` is read-only")));
        }
    }
    let (tmp, mut file) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".acp-write-{}-{n}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(file) => break (tmp, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Failure::io(raw, "creating a temporary file to write", &e)),
        }
    };
    let written = (|| {
        if let Some(meta) = &existing {
            file.set_permissions(meta.permissions())?;
        }
        file.write_all(content)?;
        file.flush()?;
        drop(file);
        fs::rename(&tmp, &target)
    })();
    written.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Failure::io(raw, "writing", &e)
    })
}
