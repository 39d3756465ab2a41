//! Issue 28 §6: the files a user names are read within bounds. A FIFO (which nobody writes),
//! a device such as `/dev/zero`, and a file over its cap are refused at once, naming the file:
//! the config file (`--config`), token files (`--token-file`), `--elicit` answers and
//! `--image` attachments. Before, `--config /dev/zero` grew until the OOM killer and a FIFO
//! hung the command.
#![cfg(target_os = "linux")]

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::*;

/// A FIFO in `dir` that nobody will ever write.
fn fifo(dir: &TempDir, name: &str) -> PathBuf {
    let path = dir.path().join(name);
    let made = Command::new("mkfifo").arg(&path).status().expect("mkfifo");
    assert!(made.success());
    path
}

/// `acp ARGS` must end (within the 20 s of `run`) with `code` and a message on stdout or
/// stderr that names `file` and says `why`.
fn refused(dir: &TempDir, args: &[&str], code: i32, file: &str, why: &str) {
    let run = run(args, dir.path(), "");
    let said = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.code(), code, "acp {args:?}:\n{said}");
    assert!(said.contains(file) && said.contains(why), "acp {args:?} should name {file} and say {why:?}:\n{said}");
}

#[test]
fn a_config_file_that_is_a_fifo_a_device_or_too_large_is_refused_naming_it() {
    let dir = TempDir::new("named-config");
    let fifo = fifo(&dir, "config.toml").display().to_string();
    refused(&dir, &["--config", &fifo, "agents"], 1, &fifo, "not a regular file");
    // Under a 2 GB address-space limit: unbounded, the read of /dev/zero would abort the
    // command (or, without the limit, grow until the OOM killer).
    let acp = acp().display().to_string();
    let zero = format!("ulimit -v 2000000; exec {acp} --config /dev/zero agents");
    let run = Command::new("sh").args(["-c", &zero]).current_dir(dir.path()).output().unwrap();
    let said = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{said}");
    assert!(said.contains("/dev/zero") && said.contains("not a regular file"), "{said}");
    let big = dir.file("big.toml", &"# a comment line of a config file that is far too long\n".repeat(20_000));
    refused(&dir, &["--config", &big, "agents"], 1, &big, "larger than 1048576 bytes");
}

#[test]
fn a_token_file_that_is_a_fifo_is_refused_naming_it() {
    let dir = TempDir::new("named-token");
    let fifo = fifo(&dir, "token").display().to_string();
    refused(
        &dir,
        &["serve", "--listen", "127.0.0.1:0", "--token-file", &fifo, "--", "true"],
        2,
        &fifo,
        "not a regular file",
    );
    refused(
        &dir,
        &["client", "--connect", "ws://127.0.0.1:9/acp", "--token-file", &fifo, "-p", "hi"],
        2,
        &fifo,
        "not a regular file",
    );
}

#[test]
fn elicit_answers_and_images_that_are_fifos_are_refused_naming_them() {
    let dir = TempDir::new("named-client");
    let acp = acp().display().to_string();
    let answers = fifo(&dir, "answers.json").display().to_string();
    refused(
        &dir,
        &["client", "--elicit", &answers, "-p", "hi", "--", &acp, "agent"],
        1,
        &answers,
        "not a regular file",
    );
    let image = fifo(&dir, "shot.png").display().to_string();
    refused(&dir, &["client", "--image", &image, "-p", "hi", "--", &acp, "agent"], 1, "shot.png", "not a regular file");
}
