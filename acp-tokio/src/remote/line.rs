//! Reading one bounded line of a newline-delimited byte stream: what the pump (WebSocket),
//! the Streamable HTTP server and its client all read an agent's or a core's output with.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Reads the next line that fits into `line` (without its line break). `Ok(false)` at the end.
/// A line longer than `max` is skipped up to its newline.
pub(crate) async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<bool> {
    line.clear();
    let mut oversized = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            // The end; a last line without its newline still counts.
            return Ok(!line.is_empty() && !oversized);
        }
        let (taken, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let content = &buf[..if done { taken - 1 } else { taken }];
        if !oversized && line.len() + content.len() <= max {
            line.extend_from_slice(content);
        } else {
            oversized = true;
            line.clear();
        }
        reader.consume(taken);
        if done {
            if oversized {
                oversized = false;
                continue;
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                continue;
            }
            return Ok(true);
        }
    }
}
