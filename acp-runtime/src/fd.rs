//! File descriptors for an adapter that multiplexes its own I/O with `poll(2)` (Unix).
//!
//! [`is_pollable`] says whether readiness means anything for a descriptor, and
//! [`NonBlocking`] holds one in non-blocking mode for as long as it lives.

use std::io;
use std::os::fd::{AsFd, BorrowedFd};

use rustix::fs::{FileType, OFlags};

/// Whether `poll(2)` tells something useful about `fd`: true for pipes and sockets. A regular
/// file (or a block device) always polls ready, a terminal is shared with the user's shell
/// (whose reads would see the non-blocking flag too), and other character devices (such as
/// `/dev/null`) have no flow control to wait for: for those an adapter keeps blocking I/O on
/// threads of their own.
pub fn is_pollable(fd: BorrowedFd<'_>) -> bool {
    match rustix::fs::fstat(fd) {
        Ok(stat) => matches!(FileType::from_raw_mode(stat.st_mode), FileType::Fifo | FileType::Socket),
        Err(_) => false,
    }
}

/// Whether `fd` is in non-blocking mode.
pub fn is_nonblocking(fd: BorrowedFd<'_>) -> io::Result<bool> {
    Ok(rustix::fs::fcntl_getfl(fd)?.contains(OFlags::NONBLOCK))
}

/// Owns `T` and keeps its descriptor in non-blocking mode while it lives; dropping it (also
/// while unwinding from a panic) puts the descriptor back into the mode it was found in. The
/// mode belongs to the open file description, which every duplicate of the descriptor (and
/// every process that inherited it) shares, hence the restoring.
///
/// ```
/// # #[cfg(unix)] {
/// use std::os::fd::AsFd;
/// use acp_runtime::fd::{NonBlocking, is_nonblocking};
///
/// let (reader, _writer) = std::io::pipe().unwrap();
/// let reader = NonBlocking::new(reader).unwrap();
/// assert!(is_nonblocking(reader.get_ref().as_fd()).unwrap());
/// let fd = reader.get_ref().as_fd().try_clone_to_owned().unwrap();
/// drop(reader);
/// assert!(!is_nonblocking(fd.as_fd()).unwrap());
/// # }
/// ```
#[derive(Debug)]
pub struct NonBlocking<T: AsFd> {
    inner: T,
    /// The descriptor was blocking when it was handed over.
    restore: bool,
}

impl<T: AsFd> NonBlocking<T> {
    /// Puts `inner`'s descriptor into non-blocking mode.
    pub fn new(inner: T) -> io::Result<NonBlocking<T>> {
        let was_nonblocking = is_nonblocking(inner.as_fd())?;
        if !was_nonblocking {
            rustix::io::ioctl_fionbio(inner.as_fd(), true)?;
        }
        Ok(NonBlocking { inner, restore: !was_nonblocking })
    }

    /// The wrapped value.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The wrapped value, mutably (to read or write through it).
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }
}

impl<T: AsFd> Drop for NonBlocking<T> {
    fn drop(&mut self) {
        if self.restore {
            let _ = rustix::io::ioctl_fionbio(self.inner.as_fd(), false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_and_sockets_are_pollable_files_are_not() {
        let (reader, writer) = std::io::pipe().expect("pipe");
        assert!(is_pollable(reader.as_fd()) && is_pollable(writer.as_fd()));
        let (a, _b) = std::os::unix::net::UnixStream::pair().expect("socketpair");
        assert!(is_pollable(a.as_fd()));
        let file = std::fs::File::open(std::env::current_exe().expect("exe")).expect("open");
        assert!(!is_pollable(file.as_fd()));
        let null = std::fs::File::open("/dev/null").expect("/dev/null");
        assert!(!is_pollable(null.as_fd()));
    }

    #[test]
    fn the_guard_restores_the_mode_it_found_also_on_a_panic() {
        let (reader, writer) = std::io::pipe().expect("pipe");
        let probe = reader.as_fd().try_clone_to_owned().expect("dup");
        let guard = NonBlocking::new(reader).expect("guard");
        assert!(is_nonblocking(probe.as_fd()).expect("F_GETFL"));
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _guard = guard;
            panic!("driver failed (expected by the test)");
        }));
        assert!(unwound.is_err());
        assert!(!is_nonblocking(probe.as_fd()).expect("F_GETFL"));

        // A descriptor that was already non-blocking stays so.
        rustix::io::ioctl_fionbio(writer.as_fd(), true).expect("FIONBIO");
        drop(NonBlocking::new(writer.as_fd()).expect("guard"));
        assert!(is_nonblocking(writer.as_fd()).expect("F_GETFL"));
    }
}
