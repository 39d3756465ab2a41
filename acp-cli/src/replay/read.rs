//! Reading a transcript written by `acp record` (format: [`crate::record::transcript`]).

use std::io::{self, BufRead};

use serde_json::Value;

use crate::record::transcript::Dir;

/// One record of a transcript, with its line number in the file (from 1).
#[derive(Debug, Clone)]
pub(crate) struct Record {
    pub(crate) lineno: usize,
    pub(crate) t_ms: u64,
    pub(crate) kind: Kind,
}

/// What a record holds.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// The header.
    Header { argv: Vec<String>, started: String },
    /// A line that crossed.
    Line { dir: Dir, text: String, truncated: bool },
    /// Lines the recorder could not keep.
    Dropped { dir: Dir, n: u64 },
    /// How the agent ended.
    Exit(Value),
    /// A record this reader does not understand, and why.
    Bad(String),
}

/// The longest transcript line read (a recorded line is at most 1 MiB, escaped up to 6 bytes
/// per byte); longer ones are reported bad and skipped.
const MAX_RECORD: usize = 8 << 20;

/// The records of a transcript, read one at a time: memory holds one record, whatever the
/// length of the file.
pub(crate) struct Records<R> {
    input: R,
    buf: Vec<u8>,
    lineno: usize,
}

impl<R: BufRead> Records<R> {
    pub(crate) fn new(input: R) -> Records<R> {
        Records { input, buf: Vec::new(), lineno: 0 }
    }

    /// The next record; `Ok(None)` at the end of the input.
    fn next_record(&mut self) -> io::Result<Option<Record>> {
        loop {
            self.buf.clear();
            let n = io::Read::take(&mut self.input, MAX_RECORD as u64 + 1).read_until(b'\n', &mut self.buf)?;
            if n == 0 {
                return Ok(None);
            }
            self.lineno += 1;
            let lineno = self.lineno;
            if self.buf.len() > MAX_RECORD && !self.buf.ends_with(b"\n") {
                self.skip_rest()?;
                return Ok(Some(Record { lineno, t_ms: 0, kind: Kind::Bad("record too long".into()) }));
            }
            let text = String::from_utf8_lossy(&self.buf);
            if !text.trim().is_empty() {
                return Ok(Some(parse(lineno, text.trim_end_matches(['\n', '\r']))));
            }
        }
    }

    /// Skips the rest of an oversized record, up to its newline.
    fn skip_rest(&mut self) -> io::Result<()> {
        self.buf.clear();
        while !self.buf.ends_with(b"\n") {
            self.buf.clear();
            if io::Read::take(&mut self.input, 1 << 16).read_until(b'\n', &mut self.buf)? == 0 {
                break;
            }
        }
        // Do not keep the oversized record's buffer.
        self.buf = Vec::new();
        Ok(())
    }
}

impl<R: BufRead> Iterator for Records<R> {
    type Item = io::Result<Record>;

    fn next(&mut self) -> Option<io::Result<Record>> {
        self.next_record().transpose()
    }
}

fn parse(lineno: usize, text: &str) -> Record {
    let bad = |why: &str| Record { lineno, t_ms: 0, kind: Kind::Bad(why.to_owned()) };
    let Ok(value) = serde_json::from_str::<Value>(text) else { return bad("not a JSON object") };
    let t_ms = value["t_ms"].as_u64().unwrap_or(0);
    let dir = match value["dir"].as_str() {
        Some("c2a") => Some(Dir::C2a),
        Some("a2c") => Some(Dir::A2c),
        _ => None,
    };
    let kind = if value.get("acp_record").is_some() {
        let argv = value["argv"].as_array().into_iter().flatten().filter_map(|a| a.as_str().map(str::to_owned));
        Kind::Header { argv: argv.collect(), started: value["started"].as_str().unwrap_or("").to_owned() }
    } else if let (Some(dir), Some(text)) = (dir, value["line"].as_str()) {
        Kind::Line { dir, text: text.to_owned(), truncated: value["truncated"] == Value::Bool(true) }
    } else if let (Some(dir), Some(n)) = (dir, value["dropped"].as_u64()) {
        Kind::Dropped { dir, n }
    } else if let Some(exit) = value.get("exit") {
        Kind::Exit(exit.clone())
    } else {
        return bad("not a transcript record");
    };
    Record { lineno, t_ms, kind }
}

/// Opens the transcript at `path`, to be read one record at a time.
pub(crate) fn open(path: &std::path::Path) -> Result<Records<io::BufReader<std::fs::File>>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    Ok(Records::new(io::BufReader::new(file)))
}

/// How the agent ended, in words.
pub(crate) fn describe_exit(exit: &Value) -> String {
    match (exit["code"].as_i64(), exit["signal"].as_i64()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => "an unknown status".to_owned(),
    }
}
