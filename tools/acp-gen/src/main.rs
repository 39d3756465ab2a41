//! `acp-gen`: writes the Rust that the method tables (`acp-proto/methods/{v1,v2}.toml`) expand
//! into, as checked-in, rustfmt'ed files that a reader can open and grep: acp-proto's method
//! enums and table, the adapters' handler traits, dispatchers and typed calls; and acp-schema's
//! v2 types, from the vendored schemas (`spec/crate-1.20.0/{v1,v2}/schema.json`, see `v2_types`).
//!
//! ```text
//! cargo run -p acp-gen            # (re)write every generated file from the tables
//! cargo run -p acp-gen -- --check # fail, naming each file, when one differs (CI runs this)
//! ```
//!
//! Each output is a function of the tables and schemas alone (no clock, no environment), so the
//! check is exact. A generated file names its table (or schema) and this tool in its first lines.

mod blocking;
mod out;
mod proto;
mod table;
mod tokio;
mod v2_types;

use std::process::ExitCode;
use table::{Table, Version};

/// One generated file: its path from the workspace root and its formatted contents.
struct Output {
    path: String,
    contents: String,
}

/// Everything written from the two tables, before formatting.
fn generate(tables: &[(Version, Table)]) -> Result<Vec<(String, String)>, String> {
    let mut files = Vec::new();
    for (version, table) in tables {
        files.extend(proto::files(*version, table));
        files.extend(tokio::files(*version, table));
        files.extend(blocking::files(*version, table));
    }
    files.extend(v2_types::files()?);
    Ok(files)
}

fn run(check: bool) -> Result<bool, String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut tables = Vec::new();
    for v in Version::ALL {
        let path = format!("{root}/{}", v.table_path());
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
        tables.push((v, Table::parse(&text, &v.table_path())?));
    }
    let mut outputs = Vec::new();
    for (path, source) in generate(&tables)? {
        outputs.push(Output { contents: out::rustfmt(&source, root, &path)?, path });
    }
    let mut differ = 0;
    for o in &outputs {
        let full = format!("{root}/{}", o.path);
        let same = std::fs::read_to_string(&full).is_ok_and(|now| now == o.contents);
        if same {
            continue;
        }
        differ += 1;
        if check {
            eprintln!("acp-gen: {} differs from what the tables and schemas give", o.path);
        } else {
            if let Some(dir) = std::path::Path::new(&full).parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            std::fs::write(&full, &o.contents).map_err(|e| format!("{full}: {e}"))?;
            println!("acp-gen: wrote {}", o.path);
        }
    }
    println!("acp-gen: {} generated files, {differ} {}", outputs.len(), if check { "differ" } else { "rewritten" });
    Ok(!check || differ == 0)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = match args.as_slice() {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => {
            eprintln!("usage: acp-gen [--check]");
            return ExitCode::from(2);
        }
    };
    match run(check) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("acp-gen: run `cargo run -p acp-gen` and commit the result");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("acp-gen: {e}");
            ExitCode::FAILURE
        }
    }
}
