//! Scenario tests of `fs/read_text_file` and `fs/write_text_file` through [`FsSandbox`].

use crate::common;

use std::fs;
use std::path::Path;

use acp_proto::types::{ReadTextFileRequest, WriteTextFileRequest};
use acp_services::{FsConfig, FsSandbox};
use common::{TempDir, kind};

fn read(sandbox: &FsSandbox, path: &str) -> Result<String, acp_proto::RpcError> {
    sandbox.read_text_file(&ReadTextFileRequest::new("s", path)).map(|r| r.content)
}

fn read_lines(sandbox: &FsSandbox, path: &str, line: Option<u32>, limit: Option<u32>) -> String {
    let mut r = ReadTextFileRequest::new("s", path);
    (r.line, r.limit) = (line, limit);
    sandbox.read_text_file(&r).unwrap().content
}

fn write(sandbox: &FsSandbox, path: &str, content: &str) -> Result<(), acp_proto::RpcError> {
    sandbox.write_text_file(&WriteTextFileRequest::new("s", path, content)).map(|_| ())
}

/// `(code, kind)` of an error.
fn refusal<T: std::fmt::Debug>(r: Result<T, acp_proto::RpcError>) -> (i32, String) {
    let e = r.unwrap_err();
    (e.code.0, kind(&e).unwrap_or_default())
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn reads_whole_files_and_line_slices() {
    let dir = TempDir::new("fs-read");
    let sandbox = FsSandbox::new([dir.path()]).unwrap();
    fs::write(dir.path().join("f.txt"), "l1\nl2\r\nl3\nl4").unwrap();
    let f = dir.join("f.txt");
    assert_eq!(read(&sandbox, &f).unwrap(), "l1\nl2\r\nl3\nl4");
    assert_eq!(read_lines(&sandbox, &f, Some(2), Some(2)), "l2\r\nl3\n");
    assert_eq!(read_lines(&sandbox, &f, Some(3), None), "l3\nl4");
    assert_eq!(read_lines(&sandbox, &f, None, Some(1)), "l1\n");
    assert_eq!(read_lines(&sandbox, &f, Some(9), Some(9)), "");
    assert_eq!(read_lines(&sandbox, &f, Some(1), Some(0)), "");
    // Line 0 (below the schema's minimum) is read as line 1.
    assert_eq!(read_lines(&sandbox, &f, Some(0), Some(1)), "l1\n");
    // `.` and `..` that stay inside are fine. A `..` after a component that does not exist
    // cancels it (where POSIX would fail): there is nothing there to follow.
    assert_eq!(read(&sandbox, &dir.join("./sub/../f.txt")).unwrap(), "l1\nl2\r\nl3\nl4");
    fs::create_dir(dir.path().join("sub")).unwrap();
    assert_eq!(read(&sandbox, &dir.join("./sub/../f.txt")).unwrap(), "l1\nl2\r\nl3\nl4");
}

#[test]
fn missing_files_directories_and_bad_paths() {
    let dir = TempDir::new("fs-errors");
    let sandbox = FsSandbox::new([dir.path()]).unwrap();
    assert_eq!(refusal(read(&sandbox, &dir.join("nope.txt"))), (-32002, "not_found".into()));
    assert_eq!(refusal(read(&sandbox, &dir.join("a/b/c.txt"))), (-32002, "not_found".into()));
    assert_eq!(refusal(read(&sandbox, &dir.join(""))), (-32602, "is_a_directory".into()));
    fs::write(dir.path().join("file"), "x").unwrap();
    assert_eq!(refusal(read(&sandbox, &dir.join("file/x"))), (-32002, "not_found".into()));
    assert_eq!(refusal(write(&sandbox, &dir.join("file/x"), "y")), (-32602, "not_a_directory".into()));
    assert_eq!(refusal(write(&sandbox, &dir.join("file/x/y"), "y")), (-32602, "not_a_directory".into()));
    assert_eq!(refusal(read(&sandbox, "")), (-32602, "invalid_path".into()));
    assert_eq!(refusal(read(&sandbox, &dir.join("a\0b"))), (-32602, "invalid_path".into()));
    assert_eq!(refusal(read(&sandbox, &"/x".repeat(10_000))), (-32602, "invalid_path".into()));
    assert_eq!(refusal(read(&sandbox, "file")), (-32602, "not_absolute".into()));
    assert_eq!(refusal(read(&sandbox, "~/file")), (-32602, "not_absolute".into()));
    assert_eq!(refusal(read(&sandbox, "/")), (-32602, "outside_roots".into()));
    assert_eq!(refusal(read(&sandbox, &format!("{}x/file", dir.path().display()))), (-32602, "outside_roots".into()));
    assert_eq!(refusal(read(&sandbox, &dir.join("../x"))), (-32602, "path_traversal".into()));
    assert_eq!(refusal(write(&sandbox, &dir.join("sub/../../x"), "y")), (-32602, "path_traversal".into()));
    // The reason names the problem.
    let e = read(&sandbox, "rel").unwrap_err();
    assert!(e.reason().unwrap().contains("not an absolute path"), "{e:?}");
}

#[test]
fn non_utf8_text_is_refused_but_utf8_slices_are_fine() {
    let dir = TempDir::new("fs-utf8");
    let sandbox = FsSandbox::new([dir.path()]).unwrap();
    fs::write(dir.path().join("bin"), b"ok\n\xff\xfe bad\nfine \xc3\xa9\n").unwrap();
    let p = dir.join("bin");
    let e = read(&sandbox, &p).unwrap_err();
    assert_eq!((e.code.0, kind(&e).as_deref()), (-32602, Some("not_utf8")));
    assert!(e.reason().unwrap().contains("offset 3"), "{e:?}");
    assert_eq!(read_lines(&sandbox, &p, Some(1), Some(1)), "ok\n");
    assert_eq!(read_lines(&sandbox, &p, Some(3), None), "fine é\n");
}

#[test]
fn the_read_cap_bounds_answers_not_files() {
    let dir = TempDir::new("fs-cap");
    let mut config = FsConfig::default();
    config.max_read_bytes = 10;
    let sandbox = FsSandbox::with_config([dir.path()], config).unwrap();
    fs::write(dir.path().join("big"), "123456789\n".repeat(1000)).unwrap();
    let p = dir.join("big");
    let e = read(&sandbox, &p).unwrap_err();
    assert_eq!((e.code.0, kind(&e).as_deref()), (-32602, Some("too_large")));
    assert!(e.reason().unwrap().contains("`line` and `limit`"));
    assert_eq!(read_lines(&sandbox, &p, Some(500), Some(1)), "123456789\n");
    let mut r = ReadTextFileRequest::new("s", p.as_str());
    (r.line, r.limit) = (Some(500), Some(2));
    assert_eq!(kind(&sandbox.read_text_file(&r).unwrap_err()).as_deref(), Some("too_large"));
    fs::write(dir.path().join("exact"), "123456789\n").unwrap();
    assert_eq!(read(&sandbox, &dir.join("exact")).unwrap(), "123456789\n");
}

#[test]
fn writes_create_replace_and_create_parents() {
    let dir = TempDir::new("fs-write");
    let sandbox = FsSandbox::new([dir.path()]).unwrap();
    let p = dir.join("new.txt");
    write(&sandbox, &p, "one").unwrap();
    assert_eq!(fs::read_to_string(dir.path().join("new.txt")).unwrap(), "one");
    write(&sandbox, &p, "two").unwrap();
    assert_eq!(read(&sandbox, &p).unwrap(), "two");
    write(&sandbox, &dir.join("a/b/c/deep.rs"), "fn main() {}\n").unwrap();
    assert_eq!(fs::read_to_string(dir.path().join("a/b/c/deep.rs")).unwrap(), "fn main() {}\n");
    write(&sandbox, &dir.join("empty"), "").unwrap();
    assert_eq!(fs::read(dir.path().join("empty")).unwrap(), b"");
    assert_eq!(refusal(write(&sandbox, &dir.join("a"), "x")), (-32602, "is_a_directory".into()));
    // No temporary file is left behind.
    assert_eq!(entries(dir.path()), ["a", "empty", "new.txt"]);
    assert_eq!(entries(&dir.path().join("a/b/c")), ["deep.rs"]);
}

#[test]
fn parents_are_not_created_when_disabled() {
    let dir = TempDir::new("fs-noparents");
    let mut config = FsConfig::default();
    config.create_parent_dirs = false;
    let sandbox = FsSandbox::with_config([dir.path()], config).unwrap();
    assert_eq!(refusal(write(&sandbox, &dir.join("a/b.txt"), "x")), (-32002, "not_found".into()));
    assert!(entries(dir.path()).is_empty());
    write(&sandbox, &dir.join("b.txt"), "x").unwrap();
    assert_eq!(entries(dir.path()), ["b.txt"]);
}

#[test]
fn a_read_only_sandbox_refuses_writes() {
    let dir = TempDir::new("fs-ro");
    let mut config = FsConfig::default();
    config.writable = false;
    let sandbox = FsSandbox::with_config([dir.path()], config).unwrap();
    let e = write(&sandbox, &dir.join("x"), "x").unwrap_err();
    assert_eq!(e.code.0, -32601);
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn several_roots() {
    let a = TempDir::new("fs-root-a");
    let b = TempDir::new("fs-root-b");
    let sandbox = FsSandbox::new([a.path(), b.path()]).unwrap();
    assert_eq!(sandbox.roots().count(), 2);
    write(&sandbox, &a.join("x"), "in a").unwrap();
    write(&sandbox, &b.join("y"), "in b").unwrap();
    assert_eq!(read(&sandbox, &a.join("x")).unwrap(), "in a");
    assert_eq!(read(&sandbox, &b.join("y")).unwrap(), "in b");
    // `..` from one root into another is fine: the walk only crosses their common ancestor.
    let across = format!("{}/../{}/y", a.path().display(), b.path().file_name().unwrap().to_string_lossy());
    assert_eq!(read(&sandbox, &across).unwrap(), "in b");
}

#[test]
fn sharing_one_sandbox_between_threads() {
    let dir = TempDir::new("fs-threads");
    let sandbox = FsSandbox::new([dir.path()]).unwrap();
    std::thread::scope(|s| {
        for t in 0..4 {
            let (sandbox, dir) = (&sandbox, &dir);
            s.spawn(move || {
                for i in 0..20 {
                    let p = dir.join(&format!("t{t}/f{i}"));
                    write(sandbox, &p, &format!("{t}:{i}")).unwrap();
                    assert_eq!(read(sandbox, &p).unwrap(), format!("{t}:{i}"));
                }
            });
        }
    });
    assert_eq!(entries(dir.path()), ["t0", "t1", "t2", "t3"]);
}

#[cfg(unix)]
mod unix {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    #[test]
    fn writes_keep_permissions_and_refuse_read_only_files() {
        let dir = TempDir::new("fs-perms");
        let sandbox = FsSandbox::new([dir.path()]).unwrap();
        let file = dir.path().join("script.sh");
        fs::write(&file, "old").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o750)).unwrap();
        write(&sandbox, &dir.join("script.sh"), "new").unwrap();
        assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o7777, 0o750);
        // Set-user-id is not carried over to the new file.
        fs::set_permissions(&file, fs::Permissions::from_mode(0o4755)).unwrap();
        write(&sandbox, &dir.join("script.sh"), "newer").unwrap();
        assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o7777, 0o755);
        fs::set_permissions(&file, fs::Permissions::from_mode(0o444)).unwrap();
        assert_eq!(refusal(write(&sandbox, &dir.join("script.sh"), "x")), (-32602, "permission_denied".into()));
        assert_eq!(fs::read_to_string(&file).unwrap(), "newer");
    }

    #[test]
    fn links_inside_the_root_are_followed_and_kept() {
        let dir = TempDir::new("fs-links");
        let sandbox = FsSandbox::new([dir.path()]).unwrap();
        fs::create_dir_all(dir.path().join("data/deep")).unwrap();
        fs::write(dir.path().join("data/x.txt"), "x").unwrap();
        symlink("data/x.txt", dir.path().join("link")).unwrap();
        symlink(dir.path().join("data"), dir.path().join("abs")).unwrap();
        write(&sandbox, &dir.join("link"), "through").unwrap();
        assert!(fs::symlink_metadata(dir.path().join("link")).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(dir.path().join("data/x.txt")).unwrap(), "through");
        assert_eq!(read(&sandbox, &dir.join("abs/x.txt")).unwrap(), "through");
        // `..` after a link goes to the parent of the link's target, as the kernel would.
        symlink("data/deep", dir.path().join("deeplink")).unwrap();
        assert_eq!(read(&sandbox, &dir.join("deeplink/../x.txt")).unwrap(), "through");
        assert_eq!(sandbox.resolve(&dir.join("deeplink/../x.txt")).unwrap(), dir.path().join("data/x.txt"));
        // A dangling link inside the root: writing creates its target.
        symlink("data/later.txt", dir.path().join("dangling")).unwrap();
        write(&sandbox, &dir.join("dangling"), "later").unwrap();
        assert_eq!(fs::read_to_string(dir.path().join("data/later.txt")).unwrap(), "later");
        // A link out to the root's parent and straight back in is fine.
        let name = dir.path().file_name().unwrap().to_string_lossy().into_owned();
        symlink(format!("../{name}/data"), dir.path().join("roundtrip")).unwrap();
        assert_eq!(read(&sandbox, &dir.join("roundtrip/x.txt")).unwrap(), "through");
    }

    #[test]
    fn links_out_are_refused_without_touching_the_target() {
        let outer = TempDir::new("fs-escape");
        let root = outer.path().join("root");
        let outside = outer.path().join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret"), "TOP SECRET").unwrap();
        let sandbox = FsSandbox::new([&root]).unwrap();
        let r = |rel: &str| format!("{}/{rel}", root.display());
        // Absolute link to an existing outside file, and a dangling one to where a write
        // would create a file.
        symlink(outside.join("secret"), root.join("abs")).unwrap();
        symlink(outside.join("planted"), root.join("dangling")).unwrap();
        symlink("/etc", root.join("etc")).unwrap();
        symlink("../outside/../root/x", root.join("detour")).unwrap();
        for (path, k) in [
            (r("abs"), "symlink_escape"),
            (r("dangling"), "symlink_escape"),
            (r("etc/passwd"), "symlink_escape"),
            (r("etc/new-file"), "symlink_escape"),
            // Passing through a real directory outside is refused even if it comes back.
            (r("detour"), "symlink_escape"),
        ] {
            let e = read(&sandbox, &path).unwrap_err();
            assert_eq!((e.code.0, kind(&e).as_deref()), (-32602, Some(k)), "{path}: {e:?}");
            assert!(!format!("{e:?}").contains("TOP SECRET"));
            let e = write(&sandbox, &path, "PWNED").unwrap_err();
            assert_eq!(kind(&e).as_deref(), Some(k), "{path}: {e:?}");
        }
        assert_eq!(entries(&outside), ["secret"]);
        assert_eq!(fs::read_to_string(outside.join("secret")).unwrap(), "TOP SECRET");
        assert!(!Path::new("/etc/new-file").exists());
    }

    #[test]
    fn hard_links_out_are_split_not_written_through() {
        let outer = TempDir::new("fs-hardlink");
        let root = outer.path().join("root");
        fs::create_dir_all(&root).unwrap();
        fs::write(outer.path().join("outside.txt"), "original").unwrap();
        fs::hard_link(outer.path().join("outside.txt"), root.join("inside.txt")).unwrap();
        let sandbox = FsSandbox::new([&root]).unwrap();
        write(&sandbox, &format!("{}/inside.txt", root.display()), "replaced").unwrap();
        assert_eq!(fs::read_to_string(outer.path().join("outside.txt")).unwrap(), "original");
        assert_eq!(fs::read_to_string(root.join("inside.txt")).unwrap(), "replaced");
        // The link is split: the new file has one name, so it reads normally.
        assert_eq!(read(&sandbox, &format!("{}/inside.txt", root.display())).unwrap(), "replaced");
    }

    #[test]
    fn hard_linked_files_are_not_read_unless_allowed() {
        let outer = TempDir::new("fs-hardlink-read");
        let root = outer.path().join("root");
        fs::create_dir_all(&root).unwrap();
        fs::write(outer.path().join("secret"), "TOP SECRET").unwrap();
        fs::hard_link(outer.path().join("secret"), root.join("inside.txt")).unwrap();
        let inside = format!("{}/inside.txt", root.display());
        let sandbox = FsSandbox::new([&root]).unwrap();
        let e = read(&sandbox, &inside).unwrap_err();
        assert_eq!((e.code.0, kind(&e).as_deref()), (-32602, Some("hard_link")), "{e:?}");
        assert!(!format!("{e:?}").contains("TOP SECRET"));
        assert!(e.reason().unwrap().contains("hard link"), "{e:?}");
        // Slices are refused too, and so is a link whose other name is inside the root.
        assert_eq!(
            refusal(sandbox.read_text_file(&{
                let mut r = ReadTextFileRequest::new("s", inside.as_str());
                r.limit = Some(1);
                r
            })),
            (-32602, "hard_link".into())
        );
        fs::hard_link(root.join("inside.txt"), root.join("twin.txt")).unwrap();
        assert_eq!(refusal(read(&sandbox, &format!("{}/twin.txt", root.display()))), (-32602, "hard_link".into()));
        let mut config = FsConfig::default();
        config.allow_hard_links = true;
        let lenient = FsSandbox::with_config([&root], config).unwrap();
        assert_eq!(read(&lenient, &inside).unwrap(), "TOP SECRET");
    }

    #[test]
    fn cycles_and_long_chains() {
        let dir = TempDir::new("fs-chains");
        fs::write(dir.path().join("end"), "end").unwrap();
        let mut previous = "end".to_owned();
        for i in 0..45 {
            let name = format!("l{i}");
            symlink(&previous, dir.path().join(&name)).unwrap();
            previous = name;
        }
        let sandbox = FsSandbox::new([dir.path()]).unwrap();
        assert_eq!(read(&sandbox, &dir.join("l39")).unwrap(), "end");
        assert_eq!(refusal(read(&sandbox, &dir.join("l40"))), (-32602, "too_many_symlinks".into()));
        let mut config = FsConfig::default();
        config.max_symlink_hops = 100;
        let lenient = FsSandbox::with_config([dir.path()], config).unwrap();
        assert_eq!(read(&lenient, &dir.join("l44")).unwrap(), "end");
        symlink("self", dir.path().join("self")).unwrap();
        assert_eq!(refusal(write(&lenient, &dir.join("self"), "x")), (-32602, "too_many_symlinks".into()));
    }

    #[test]
    fn a_symlinked_root_works_in_both_spellings() {
        let outer = TempDir::new("fs-rootlink");
        fs::create_dir(outer.path().join("real")).unwrap();
        symlink("real", outer.path().join("alias")).unwrap();
        let alias = outer.path().join("alias");
        let sandbox = FsSandbox::new([&alias]).unwrap();
        assert_eq!(sandbox.roots().next().unwrap(), outer.path().join("real"));
        write(&sandbox, &format!("{}/f", alias.display()), "via alias").unwrap();
        assert_eq!(read(&sandbox, &format!("{}/real/f", outer.path().display())).unwrap(), "via alias");
        let e = read(&sandbox, &format!("{}/alias/../f", outer.path().display())).unwrap_err();
        assert_eq!(kind(&e).as_deref(), Some("path_traversal"));
    }

    #[test]
    fn special_files_are_never_opened() {
        let dir = TempDir::new("fs-fifo");
        let fifo = dir.path().join("fifo");
        let fifo_type = rustix::fs::FileType::Fifo;
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, fifo_type, rustix::fs::Mode::from_raw_mode(0o600), 0).unwrap();
        let sandbox = FsSandbox::new([dir.path()]).unwrap();
        // Opening a FIFO would block this test forever.
        assert_eq!(refusal(read(&sandbox, &dir.join("fifo"))), (-32602, "not_a_file".into()));
        assert_eq!(refusal(write(&sandbox, &dir.join("fifo"), "x")), (-32602, "not_a_file".into()));
        assert_eq!(refusal(read(&sandbox, "/dev/null")), (-32602, "outside_roots".into()));
    }
}

/// Every path of up to three tricky components either is refused or leads inside the root; no
/// read ever returns the outside file; no write ever lands outside. No input panics.
#[cfg(unix)]
#[test]
fn exhaustive_small_paths_never_escape() {
    use std::os::unix::fs::symlink;
    let outer = TempDir::new("fs-exhaustive");
    let root = outer.path().join("root");
    let outside = outer.path().join("outside");
    fs::create_dir_all(root.join("in")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret"), "TOP SECRET").unwrap();
    fs::write(root.join("file"), "inside").unwrap();
    symlink("../outside", root.join("out")).unwrap();
    symlink(".", root.join("loop")).unwrap();
    symlink(&outside, root.join("abs")).unwrap();
    symlink("../..", root.join("in/up")).unwrap();
    symlink("../root/in", root.join("back")).unwrap();
    let sandbox = FsSandbox::new([&root]).unwrap();
    let canonical = fs::canonicalize(&root).unwrap();
    let parts = ["..", ".", "in", "up", "out", "loop", "abs", "back", "missing", "file", "secret", "c:", "\\\\h", ""];
    let mut paths = vec![String::new()];
    let mut frontier = vec![String::new()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for p in &frontier {
            for part in parts {
                next.push(format!("{p}/{part}"));
            }
        }
        paths.extend(next.iter().cloned());
        frontier = next;
    }
    let (mut accepted, mut refused) = (0, 0);
    for (i, rel) in paths.iter().enumerate() {
        let path = format!("{}{rel}", root.display());
        match sandbox.resolve(&path) {
            Ok(resolved) => {
                accepted += 1;
                assert!(resolved.starts_with(&canonical), "{path} -> {}", resolved.display());
            }
            Err(e) => {
                refused += 1;
                assert!(matches!(e.code.0, -32602 | -32002), "{path}: {e:?}");
            }
        }
        // The only texts inside the root: the file, and what earlier writes put there.
        if let Ok(text) = read(&sandbox, &path) {
            assert!(text == "inside" || text == "w", "{path}: {text:?}");
        }
        if i % 3 == 0 && write(&sandbox, &path, "w").is_ok() {
            let resolved = sandbox.resolve(&path).unwrap();
            assert!(resolved.starts_with(&canonical), "{path}");
        }
    }
    assert!(accepted > 500 && refused > 500, "{accepted} accepted, {refused} refused");
    assert_eq!(entries(&outside), ["secret"]);
    assert_eq!(fs::read_to_string(outside.join("secret")).unwrap(), "TOP SECRET");
    assert_eq!(entries(outer.path()), ["outside", "root"]);
}
