//! Races against [`FsSandbox`]: another thread changes the tree while the agent's requests
//! are served. `renameat2(RENAME_EXCHANGE)` makes each change atomic, so the tree flips between
//! two states as fast as the kernel allows; the loops are bounded in iterations, not time.
//!
//! Linux only (`RENAME_EXCHANGE`); the descriptor-based code they exercise is the same on the
//! other Unix systems.
#![cfg(target_os = "linux")]

use crate::common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use acp_proto::types::{ReadTextFileRequest, WriteTextFileRequest};
use acp_services::FsSandbox;
use common::{TempDir, kind};
use rustix::fs::{CWD, FileType, Mode, OFlags, RenameFlags};

/// How many requests each race test makes.
const OPERATIONS: usize = 2_000;
/// The most exchanges an attacker makes (it normally stops long before, when the requests end).
const MAX_SWAPS: usize = 2_000_000;
/// How long a batch of requests may take before it counts as hung. Not a performance bound:
/// the batches take well under a second; a blocked `open` never returns at all.
const WATCHDOG: Duration = Duration::from_secs(120);

fn read(sandbox: &FsSandbox, path: &str) -> Result<String, acp_proto::RpcError> {
    sandbox.read_text_file(&ReadTextFileRequest::new("s", path)).map(|r| r.content)
}

fn write(sandbox: &FsSandbox, path: &str, content: &str) -> Result<(), acp_proto::RpcError> {
    sandbox.write_text_file(&WriteTextFileRequest::new("s", path, content)).map(|_| ())
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// Every path under `dir` (links not followed).
fn all_paths(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if fs::symlink_metadata(&path).unwrap().is_dir() {
                todo.push(path.clone());
            }
            out.push(path);
        }
    }
    out
}

/// A thread exchanging `a` and `b` until stopped (or `MAX_SWAPS`); `count` says how far it got.
struct Attacker {
    stop: Arc<AtomicBool>,
    count: Arc<AtomicUsize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Attacker {
    fn start(a: PathBuf, b: PathBuf) -> Attacker {
        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicUsize::new(0));
        let (s, c) = (stop.clone(), count.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) && c.load(Ordering::Relaxed) < MAX_SWAPS {
                rustix::fs::renameat_with(CWD, &a, CWD, &b, RenameFlags::EXCHANGE).expect("RENAME_EXCHANGE");
                c.fetch_add(1, Ordering::Relaxed);
            }
        });
        // Requests start once the tree is really flipping.
        while count.load(Ordering::Relaxed) < 10 {
            std::thread::yield_now();
        }
        Attacker { stop, count, thread: Some(thread) }
    }

    /// Stops the thread; returns how many exchanges it made.
    fn stop(mut self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap();
        self.count.load(Ordering::Relaxed)
    }
}

impl Drop for Attacker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Runs `batch` on its own thread and fails the test if it does not finish within
/// [`WATCHDOG`] (a read blocked on a FIFO); `unblock` then releases the stuck thread.
fn with_watchdog<T: Send + 'static>(batch: impl FnOnce() -> T + Send + 'static, unblock: impl FnOnce()) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(batch());
    });
    match rx.recv_timeout(WATCHDOG) {
        Ok(result) => result,
        Err(e) => {
            unblock();
            panic!("the requests did not finish ({e}): a read is blocked, most likely opening a FIFO");
        }
    }
}

/// Opens each FIFO for writing without blocking, which releases a reader stuck opening it.
fn open_writers(fifos: &[PathBuf]) {
    for fifo in fifos {
        let _ = rustix::fs::open(fifo, OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty());
    }
}

/// The outside secret sits where `root/d/f` leads whenever `d` is the link; reads and writes
/// under `root/d` race an exchange of the directory `d` and that link.
#[test]
fn swapping_a_directory_for_a_link_out_never_leaks_nor_escapes() {
    let outer = TempDir::new("race-dir");
    let (root, outside) = (outer.path().join("root"), outer.path().join("outside"));
    fs::create_dir_all(root.join("d")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(root.join("d/f"), "inside").unwrap();
    fs::write(outside.join("f"), "TOP SECRET").unwrap();
    symlink(&outside, root.join("s")).unwrap();
    let sandbox = FsSandbox::new([&root]).unwrap();
    let path = |rel: &str| format!("{}/{rel}", root.display());

    let attacker = Attacker::start(root.join("d"), root.join("s"));
    let (mut served, mut refused) = (0, std::collections::BTreeMap::new());
    for i in 0..OPERATIONS {
        let result = match i % 4 {
            0 | 1 => read(&sandbox, &path("d/f")).map(|text| {
                assert!(!text.contains("SECRET"), "leaked the outside file: {text:?}");
                assert_eq!(text, "inside");
            }),
            2 => write(&sandbox, &path(&format!("d/new{i}")), "planted"),
            _ => write(&sandbox, &path(&format!("d/p{i}/q/new")), "planted"),
        };
        match result {
            Ok(()) => served += 1,
            Err(e) => {
                // Which refusal depends on where the exchange falls; none may carry the secret.
                assert!(!format!("{e:?}").contains("SECRET"), "{e:?}");
                *refused.entry(kind(&e).unwrap_or_default()).or_insert(0) += 1;
            }
        }
    }
    let swaps = attacker.stop();
    println!("{swaps} exchanges; {served} requests served, refused: {refused:?}");
    assert!(!refused.is_empty(), "the race never happened ({swaps} exchanges)");
    assert_eq!(entries(&outside), ["f"], "something was created outside the root");
    assert_eq!(fs::read_to_string(outside.join("f")).unwrap(), "TOP SECRET");
    let strays: Vec<_> = all_paths(&root).into_iter().filter(|p| p.to_string_lossy().contains(".acp-write-")).collect();
    assert!(strays.is_empty(), "temporary files left: {strays:?}");
}

/// `root/f` is exchanged with a FIFO while it is read: a check-then-open reader would block
/// forever in `open`; the sandbox must answer every read, with the text or `not_a_file`.
#[test]
fn a_fifo_swapped_in_never_blocks_a_read() {
    let outer = TempDir::new("race-fifo");
    let root = outer.path().join("root");
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("f"), "text").unwrap();
    rustix::fs::mknodat(CWD, root.join("p"), FileType::Fifo, Mode::from_raw_mode(0o600), 0).expect("mkfifo");
    let sandbox = FsSandbox::new([&root]).unwrap();
    let target = format!("{}/f", root.display());

    let attacker = Attacker::start(root.join("f"), root.join("p"));
    let stop = attacker.stop.clone();
    let (served, refused) = with_watchdog(
        move || {
            let (mut served, mut refused) = (0, 0);
            for _ in 0..OPERATIONS {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                match read(&sandbox, &target) {
                    Ok(text) => {
                        assert_eq!(text, "text");
                        served += 1;
                    }
                    Err(e) => {
                        assert_eq!(kind(&e).as_deref(), Some("not_a_file"), "{e:?}");
                        refused += 1;
                    }
                }
            }
            (served, refused)
        },
        || {
            attacker.stop.store(true, Ordering::Relaxed);
            open_writers(&[root.join("f"), root.join("p")]);
        },
    );
    let swaps = attacker.stop();
    println!("{swaps} exchanges; {served} reads served, {refused} refused");
    assert!(refused > 0, "the race never happened ({swaps} exchanges)");
}

/// A FIFO at the path, or behind an in-root link, is refused at once, whatever the slice.
#[test]
fn a_fifo_is_refused_without_blocking() {
    let dir = TempDir::new("fifo-direct");
    rustix::fs::mknodat(CWD, dir.path().join("fifo"), FileType::Fifo, Mode::from_raw_mode(0o600), 0).expect("mkfifo");
    symlink("fifo", dir.path().join("link")).unwrap();
    let sandbox = FsSandbox::new([dir.path()]).unwrap();
    let fifos = [dir.path().join("fifo")];
    let (fifo, link) = (dir.join("fifo"), dir.join("link"));
    let kinds = with_watchdog(
        move || {
            let mut sliced = ReadTextFileRequest::new("s", fifo.as_str());
            (sliced.line, sliced.limit) = (Some(1), Some(1));
            [
                read(&sandbox, &fifo).unwrap_err(),
                read(&sandbox, &link).unwrap_err(),
                sandbox.read_text_file(&sliced).unwrap_err(),
                write(&sandbox, &fifo, "x").unwrap_err(),
            ]
            .map(|e| kind(&e))
        },
        || open_writers(&fifos),
    );
    assert_eq!(kinds, [(); 4].map(|()| Some("not_a_file".to_owned())));
    // The FIFO is still a FIFO: the write did not replace it.
    assert!(
        rustix::fs::stat(dir.path().join("fifo")).map(|s| FileType::from_raw_mode(s.st_mode)).unwrap()
            == FileType::Fifo
    );
}
