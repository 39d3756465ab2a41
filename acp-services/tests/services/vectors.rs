//! The raxol path-confinement vectors, run against [`FsSandbox`].
//!
//! Read from `tests/vectors/raxol/` (vendored; see its `PROVENANCE.md`); a missing or
//! unreadable file fails the test.
//!
//! How the vectors map onto ACP (run with `-- --show-output` to see the per-vector report):
//!
//! * each vector's tree is built under a fresh `outer/base` temporary directory; the root is
//!   `base/<root>`, and `requested` (relative in the vectors) becomes the absolute path
//!   `<root>/<requested>`, text kept as is (`..` included), since ACP paths are absolute;
//! * `absolute_requested_jailed_under_root` asks for `/etc/passwd` and expects it *jailed*
//!   under the root (raxol re-roots absolute paths). ACP paths are absolute and mean what they
//!   say, so there is no jailing: the vector runs adapted, as `<root>/etc/passwd` (accepted),
//!   and the literal `/etc/passwd` is checked to be refused (`outside_roots`);
//! * vectors carrying `ref_format` are skipped: that is raxol's gate on content-addressed
//!   references (`blobs/<sha256>`), which ACP's `fs/*` methods do not have (raxol's own ACP
//!   package skips them too);
//! * the Windows-looking link targets (`c:/…`, `\\host\share`) run on Unix too: the sandbox
//!   refuses such targets everywhere (see the crate docs);
//! * on non-Unix systems every vector is skipped (building the trees needs Unix symlinks).
//!
//! Every accept vector is resolved, then read (or, for a file that does not exist yet,
//! written and read back). Every reject vector is resolved, read and written; each must be
//! refused with `-32602` and the vector's reason as `data.kind`, no response may contain the
//! outside file's text, and a snapshot of the whole scratch tree (every entry, file content
//! and link target) must be unchanged: the outside target was neither read into an answer
//! nor created nor modified.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use acp_proto::types::{ReadTextFileRequest, WriteTextFileRequest};
use acp_services::{ErrorKind, FsSandbox};
use common::{TempDir, kind};
use serde_json::Value;

fn load(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/raxol").join(name);
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("vector file is JSON")
}

fn str_field<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_else(|| panic!("vector field `{key}` missing in {v}"))
}

/// Why a vector does not run here, if it does not.
fn skip_reason(v: &Value) -> Option<&'static str> {
    if v.get("ref_format").is_some() {
        return Some(
            "`ref_format`: raxol's content-addressed ref gate (Path.confine only), not part of ACP's fs methods",
        );
    }
    if cfg!(not(unix)) {
        return Some("building the vector's tree needs Unix symbolic links");
    }
    None
}

/// Builds the vector's `setup` under `base`.
#[cfg(unix)]
fn build(base: &Path, setup: &Value) {
    for item in setup.as_array().expect("setup is a list") {
        if let Some(dir) = item.get("dir").and_then(Value::as_str) {
            fs::create_dir_all(base.join(dir)).unwrap();
        } else if let Some(file) = item.get("file").and_then(Value::as_str) {
            fs::write(base.join(file), str_field(item, "content")).unwrap();
        } else if let Some(link) = item.get("symlink").and_then(Value::as_str) {
            std::os::unix::fs::symlink(str_field(item, "target"), base.join(link)).unwrap();
        } else {
            panic!("unknown setup item {item}");
        }
    }
}

#[cfg(not(unix))]
fn build(_: &Path, _: &Value) {
    unreachable!("skipped")
}

#[derive(Debug, PartialEq, Eq)]
enum Entry {
    Dir,
    File(Vec<u8>),
    Link(PathBuf),
}

/// Every entry under `dir`, links not followed.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            let entry = if meta.file_type().is_symlink() {
                Entry::Link(fs::read_link(&path).unwrap())
            } else if meta.is_dir() {
                todo.push(path.clone());
                Entry::Dir
            } else {
                Entry::File(fs::read(&path).unwrap())
            };
            out.insert(path, entry);
        }
    }
    out
}

/// The request path for a vector: `<root>/<requested>`, text kept as is.
fn request_path(root: &Path, requested: &str) -> String {
    format!("{}/{}", root.display(), requested.trim_start_matches('/'))
}

fn run_accept(v: &Value) {
    let outer = TempDir::new("vec-accept");
    let base = outer.path().join("base");
    fs::create_dir(&base).unwrap();
    build(&base, &v["setup"]);
    let root = base.join(str_field(v, "root"));
    let sandbox = FsSandbox::new([&root]).unwrap();
    let requested = str_field(v, "requested");
    let path = request_path(&root, requested);

    let resolved = sandbox.resolve(&path).unwrap_or_else(|e| panic!("{path} refused: {e:?}"));
    let canonical_root = fs::canonicalize(&root).unwrap();
    assert!(resolved.starts_with(&canonical_root), "{} escapes {}", resolved.display(), canonical_root.display());
    let read = sandbox.read_text_file(&ReadTextFileRequest::new("s", path.as_str()));
    match fs::metadata(&resolved) {
        Ok(meta) if meta.is_file() => {
            assert_eq!(read.unwrap().content, fs::read_to_string(&resolved).unwrap());
        }
        Ok(meta) if meta.is_dir() => {
            let e = read.unwrap_err();
            assert_eq!(ErrorKind::of(&e), Some(ErrorKind::IsADirectory), "{e:?}");
        }
        Ok(other) => panic!("unexpected {other:?}"),
        Err(_) => {
            let e = read.unwrap_err();
            assert_eq!(e.code.0, -32002, "{e:?}");
            sandbox.write_text_file(&WriteTextFileRequest::new("s", path.as_str(), "written")).unwrap();
            assert_eq!(fs::read_to_string(&resolved).unwrap(), "written");
            assert_eq!(
                sandbox.read_text_file(&ReadTextFileRequest::new("s", path.as_str())).unwrap().content,
                "written"
            );
        }
    }
    if requested.starts_with('/') {
        // ACP has no jailing: the literal absolute path is outside the root.
        let e = sandbox.read_text_file(&ReadTextFileRequest::new("s", requested)).unwrap_err();
        assert_eq!(kind(&e).as_deref(), Some("outside_roots"), "{e:?}");
        println!("  note: `{requested}` adapted to `{path}` (accepted); the literal path is refused: outside_roots");
    }
}

fn run_reject(v: &Value) {
    let outer = TempDir::new("vec-reject");
    let base = outer.path().join("base");
    fs::create_dir(&base).unwrap();
    build(&base, &v["setup"]);
    let root = base.join(str_field(v, "root"));
    let sandbox = FsSandbox::new([&root]).unwrap();
    let expect = str_field(v, "expect");
    let path = request_path(&root, str_field(v, "requested"));
    let before = snapshot(outer.path());

    let e = sandbox.resolve(&path).unwrap_err();
    assert_eq!(kind(&e).as_deref(), Some(expect), "resolve {path}: {e:?}");
    let e = sandbox.read_text_file(&ReadTextFileRequest::new("s", path.as_str())).unwrap_err();
    assert_eq!((e.code.0, kind(&e).as_deref()), (-32602, Some(expect)), "read {path}: {e:?}");
    assert!(!serde_json::to_string(&e).unwrap().contains("TOP SECRET"), "leaked: {e:?}");
    let e = sandbox.write_text_file(&WriteTextFileRequest::new("s", path.as_str(), "PWNED")).unwrap_err();
    assert_eq!((e.code.0, kind(&e).as_deref()), (-32602, Some(expect)), "write {path}: {e:?}");

    assert_eq!(snapshot(outer.path()), before, "the tree changed");
    for absolute in ["/host/share/secret.txt", "/host/share", "/outside/secret.txt"] {
        assert!(!Path::new(absolute).exists(), "{absolute} was created");
    }
}

fn run_file(name: &str, accept: bool) -> (usize, usize) {
    let doc = load(name);
    let vectors = doc["vectors"].as_array().expect("a `vectors` list");
    assert!(!vectors.is_empty());
    let (mut ran, mut skipped) = (0, 0);
    println!("{name}:");
    for v in vectors {
        let name = str_field(v, "name");
        if let Some(reason) = skip_reason(v) {
            println!("  SKIP {name}: {reason}");
            skipped += 1;
            continue;
        }
        if accept {
            assert_eq!(str_field(v, "expect"), "ok");
            run_accept(v);
        } else {
            run_reject(v);
        }
        println!("  PASS {name}{}", if accept { String::new() } else { format!(" ({})", str_field(v, "expect")) });
        ran += 1;
    }
    println!("  {ran} passed, {skipped} skipped");
    (ran, skipped)
}

#[test]
fn accept_vectors() {
    let counts = run_file("path_accept_vectors.json", true);
    if cfg!(unix) {
        assert_eq!(counts, (6, 2), "(ran, skipped)");
    }
}

#[test]
fn reject_vectors() {
    let counts = run_file("path_reject_vectors.json", false);
    if cfg!(unix) {
        assert_eq!(counts, (12, 4), "(ran, skipped)");
    }
}
