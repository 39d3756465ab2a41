//! Files a user names (the config file, token files, `--elicit` answers, `--image` and `@path`
//! attachments, TLS certificates and keys, the line editor's history, `acp agent --history`'s
//! session files, the session database), opened and read within bounds.
//!
//! [`open_regular`] opens without blocking (`O_NONBLOCK`: opening a FIFO would otherwise wait
//! for a writer) and refuses what is not a regular file: a FIFO, a device such as
//! `/dev/zero`, a socket, a directory. [`read_regular`] then reads at most a cap, and refuses
//! a larger file (also one that grows past the cap while it is read). Each error names the file.
//!
//! Not here: `acp replay FILE` and `--file PROMPT` (`-` is stdin) take pipes on purpose; a
//! transcript is read one record at a time and a prompt up to its cap, so neither grows
//! without a bound.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The largest config file read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// The largest token file read (`--token-file`).
pub const MAX_TOKEN_BYTES: u64 = 64 << 10;
/// The largest PEM file accepted (`--tls-cert`, `--tls-key`, `--ca-file`).
pub const MAX_PEM_BYTES: u64 = 1 << 20;

/// `path` opened for reading, if it is a regular file (see the [module docs](self)).
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_with(std::fs::OpenOptions::new().read(true), path)
}

/// `path` opened for appending, if it is a regular file that exists (a FIFO opened for writing
/// would wait for a reader).
pub fn append_regular(path: &Path) -> io::Result<File> {
    open_with(std::fs::OpenOptions::new().append(true), path)
}

/// `path` opened for reading and writing, created (private: mode 0600) when it does not exist,
/// if it is a regular file: for a file another library then opens by its path (the session
/// database), which must not find a FIFO, a device or a directory there (SQLite would say
/// `disk I/O error`, naming nothing).
pub fn open_or_create_regular(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    open_with(&mut options, path)
}

fn open_with(options: &mut std::fs::OpenOptions, path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Regular files ignore O_NONBLOCK: their reads and writes stay plain blocking ones.
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
    }
    let file = options.open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() {
        return Ok(file);
    }
    let what = if kind.is_dir() { "a directory" } else { "not a regular file (a FIFO, a device or a socket)" };
    Err(io::Error::new(io::ErrorKind::InvalidInput, what))
}

/// The bytes of the regular file `path`, refused (naming the cap) when it holds more than `max`.
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("larger than {max} bytes")));
    }
    Ok(bytes)
}

/// [`read_regular`], as UTF-8 text.
pub fn read_regular_text(path: &Path, max: u64) -> io::Result<String> {
    String::from_utf8(read_regular(path, max)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

/// A token file's token (`--token-file`): its first line, trimmed; an empty token, and a file
/// that is not regular or holds more than [`MAX_TOKEN_BYTES`], are refused.
pub fn read_token(path: &Path) -> Result<String, String> {
    let text = read_regular_text(path, MAX_TOKEN_BYTES).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_owned();
    if token.is_empty() { Err(format!("{} holds no token", path.display())) } else { Ok(token) }
}

/// Reads `acp serve`'s token file: a token per line (each trimmed; blank lines skipped), at
/// least one.
pub fn read_tokens(path: &Path) -> Result<Vec<String>, String> {
    let text = read_regular_text(path, MAX_TOKEN_BYTES).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let tokens: Vec<String> = text.lines().map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned).collect();
    if tokens.is_empty() { Err(format!("{} holds no token", path.display())) } else { Ok(tokens) }
}

/// Whether `path` is a regular file of at most `max` bytes, for a file another library reads
/// (TLS files, the line editor's history); `Err` says why not.
pub fn check_regular(path: &Path, max: u64) -> io::Result<()> {
    let size = open_regular(path)?.metadata()?.len();
    if size > max {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("larger than {max} bytes")));
    }
    Ok(())
}

/// An environment variable, unless it is unset or empty.
pub(crate) fn non_empty_var(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn fifos_devices_directories_and_large_files_are_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("acp-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_bits_truncate(0o600),
            0,
        )
        .unwrap();
        // Nobody ever writes the FIFO: a blocking open would wait forever.
        let refused = read_regular(&fifo, 10).unwrap_err();
        assert!(refused.to_string().contains("not a regular file"), "{refused}");
        assert!(read_regular(Path::new("/dev/zero"), 10).unwrap_err().to_string().contains("not a regular file"));
        assert!(read_regular(&dir, 10).unwrap_err().to_string().contains("a directory"));
        let big = dir.join("big");
        std::fs::write(&big, [b'x'; 11]).unwrap();
        assert_eq!(read_regular(&big, 10).unwrap_err().to_string(), "larger than 10 bytes");
        assert_eq!(read_regular(&big, 11).unwrap(), [b'x'; 11]);
        assert!(check_regular(&big, 10).is_err() && check_regular(&big, 11).is_ok());
        assert_eq!(read_regular(&dir.join("missing"), 10).unwrap_err().kind(), io::ErrorKind::NotFound);
        // Opened for writing too (the session database): the FIFO at once, a device, a directory.
        assert!(open_or_create_regular(&fifo).unwrap_err().to_string().contains("not a regular file"));
        assert!(open_or_create_regular(Path::new("/dev/null")).unwrap_err().to_string().contains("not a regular file"));
        assert!(open_or_create_regular(&dir).is_err());
        let created = dir.join("created");
        open_or_create_regular(&created).unwrap();
        assert!(std::fs::metadata(&created).unwrap().is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
