//! Check-then-use made deterministic: the tree is changed *between* [`Roots::resolve`] and the
//! descriptor-based use, which is exactly the window a concurrent attacker aims for
//! (`tests/services/fs_race.rs` races it for real). Before the descriptor-based code, the use reopened
//! the resolved path by name and so followed whatever had been swapped in.

use std::fs;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rustix::fs::{CWD, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::*;
use crate::testutil::TempDir;

/// `root/d/f` ("inside") and `outside/f` (the secret), and the way to swap `root/d` for a
/// link to `outside`.
struct Tree {
    outer: TempDir,
    sandbox: FsSandbox,
}

impl Tree {
    fn new(tag: &str) -> Tree {
        let outer = TempDir::new(tag);
        fs::create_dir_all(outer.path().join("root/d")).unwrap();
        fs::create_dir_all(outer.path().join("outside")).unwrap();
        fs::write(outer.path().join("root/d/f"), "inside").unwrap();
        fs::write(outer.path().join("outside/f"), "TOP SECRET").unwrap();
        let sandbox = FsSandbox::new([outer.path().join("root")]).unwrap();
        Tree { outer, sandbox }
    }

    fn root(&self) -> PathBuf {
        self.outer.path().join("root")
    }

    fn raw(&self, rel: &str) -> String {
        format!("{}/{rel}", self.root().display())
    }

    /// `root/d` becomes a link to the outside directory (the real `d` moves aside).
    fn swap_in_link(&self, absolute: bool) {
        fs::rename(self.root().join("d"), self.root().join("d.real")).unwrap();
        let target = if absolute { self.outer.path().join("outside") } else { PathBuf::from("../outside") };
        symlink(target, self.root().join("d")).unwrap();
    }

    fn outside(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.outer.path().join("outside"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn request(raw: &str) -> ReadTextFileRequest {
    ReadTextFileRequest::new("s", raw)
}

/// Runs `test` with `openat2`, then with the fallback walk of older kernels.
fn both_ways(test: impl Fn()) {
    test();
    fd::openat2::FORCE_WALK.with(|force| force.set(true));
    test();
    fd::openat2::FORCE_WALK.with(|force| force.set(false));
}

#[test]
fn a_directory_swapped_for_a_link_out_after_the_check_is_not_read() {
    both_ways(|| {
        for absolute in [true, false] {
            let tree = Tree::new("race-unit-read");
            let raw = tree.raw("d/f");
            let resolved = tree.sandbox.roots.resolve(&raw).unwrap();
            tree.swap_in_link(absolute);
            let e = tree.sandbox.read_resolved(&raw, &resolved, &request(&raw)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::SymlinkEscape, "{e:?}");
            assert!(!e.reason.contains("SECRET"));
            // Resolving again sees the link and refuses it up front.
            assert_eq!(tree.sandbox.read(&request(&raw)).unwrap_err().kind, ErrorKind::SymlinkEscape);
        }
    });
}

#[test]
fn a_directory_swapped_for_a_link_out_after_the_check_is_not_written() {
    both_ways(|| {
        for (rel, absolute) in [("d/new", true), ("d/new", false), ("d/a/b/new", true), ("d/f", false)] {
            let tree = Tree::new("race-unit-write");
            let raw = tree.raw(rel);
            let resolved = tree.sandbox.roots.resolve(&raw).unwrap();
            tree.swap_in_link(absolute);
            let e = tree.sandbox.write_resolved(&raw, &resolved, b"PWNED").unwrap_err();
            assert_eq!(e.kind, ErrorKind::SymlinkEscape, "{rel}: {e:?}");
            assert_eq!(tree.outside(), ["f"], "{rel}");
            assert_eq!(fs::read_to_string(tree.outer.path().join("outside/f")).unwrap(), "TOP SECRET");
        }
    });
}

#[test]
fn the_fallback_walk_reads_and_writes_like_openat2() {
    both_ways(|| {
        let tree = Tree::new("race-unit-both");
        symlink("d", tree.root().join("alias")).unwrap();
        let write = |rel: &str, text: &str| tree.sandbox.write(&tree.raw(rel), text.as_bytes());
        let read = |rel: &str| tree.sandbox.read(&request(&tree.raw(rel)));
        write("d/x/y/z.txt", "deep").unwrap();
        assert_eq!(read("alias/x/y/z.txt").unwrap(), "deep");
        write("alias/f", "again").unwrap();
        assert_eq!(read("d/f").unwrap(), "again");
        assert!(fs::symlink_metadata(tree.root().join("alias")).unwrap().file_type().is_symlink());
        assert_eq!(read("d").unwrap_err().kind, ErrorKind::IsADirectory);
        fs::write(tree.root().join("file"), "x").unwrap();
        assert_eq!(write("file/x/y", "x").unwrap_err().kind, ErrorKind::NotADirectory);
    });
}

#[test]
fn a_fifo_swapped_in_after_the_check_is_refused_without_blocking() {
    let tree = Tree::new("race-unit-fifo");
    let raw = tree.raw("d/f");
    let resolved = tree.sandbox.roots.resolve(&raw).unwrap();
    let path = tree.root().join("d/f");
    fs::remove_file(&path).unwrap();
    rustix::fs::mknodat(CWD, &path, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
    let (tx, rx) = mpsc::channel();
    let sandbox = tree.sandbox.clone();
    std::thread::spawn(move || {
        let _ = tx.send(sandbox.read_resolved(&raw, &resolved, &request(&raw)));
    });
    let Ok(result) = rx.recv_timeout(Duration::from_secs(60)) else {
        // Release the reader blocked opening the FIFO, then fail.
        let _ = rustix::fs::open(&path, OFlags::WRONLY | OFlags::NONBLOCK, Mode::empty());
        panic!("the read blocked on the FIFO");
    };
    assert_eq!(result.unwrap_err().kind, ErrorKind::NotAFile);
}

#[test]
fn a_hard_link_swapped_in_after_the_check_is_refused() {
    let tree = Tree::new("race-unit-hardlink");
    let raw = tree.raw("d/f");
    let resolved = tree.sandbox.roots.resolve(&raw).unwrap();
    fs::remove_file(tree.root().join("d/f")).unwrap();
    fs::hard_link(tree.outer.path().join("outside/f"), tree.root().join("d/f")).unwrap();
    let e = tree.sandbox.read_resolved(&raw, &resolved, &request(&raw)).unwrap_err();
    assert_eq!(e.kind, ErrorKind::HardLink, "{e:?}");
}

/// The fallback for kernels without `openat2` follows no link either, and takes plain names
/// only.
#[test]
fn the_descriptor_walk_follows_no_link() {
    let tree = Tree::new("race-unit-walk");
    symlink("d", tree.root().join("alias")).unwrap();
    let root = rustix::fs::open(tree.root(), OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap();
    let read = OFlags::RDONLY | OFlags::CLOEXEC;
    let text = |fd: OwnedFd| std::io::read_to_string(fs::File::from(fd)).unwrap();
    assert_eq!(text(fd::walk_beneath(root.as_fd(), Path::new("d/f"), read).unwrap()), "inside");
    assert!(fd::walk_beneath(root.as_fd(), Path::new("alias/f"), read).is_err());
    assert_eq!(fd::walk_beneath(root.as_fd(), Path::new("d/../d/f"), read).unwrap_err(), Errno::INVAL);
    assert_eq!(fd::walk_beneath(root.as_fd(), Path::new("/d/f"), read).unwrap_err(), Errno::INVAL);
    tree.swap_in_link(true);
    assert!(fd::walk_beneath(root.as_fd(), Path::new("d/f"), read).is_err());
    assert!(fd::walk_beneath(root.as_fd(), Path::new("d"), read).is_err());
    // The same through `open_beneath` (`openat2` here).
    assert!(fd::open_beneath(root.as_fd(), Path::new("d/f"), read).is_err());
    assert_eq!(text(fd::open_beneath(root.as_fd(), Path::new("d.real/f"), read).unwrap()), "inside");
}
