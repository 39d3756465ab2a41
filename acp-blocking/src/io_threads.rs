//! The transport threads of a connection: a reader feeding chunks to the driver and a writer
//! writing the batches the driver hands it, so that the driver never blocks on I/O.

use std::io::{self, Read, Write};
use std::sync::mpsc::{self, Sender};
use std::thread;

use crate::driver::{Input, READ_BUFFERS, READ_CHUNK};

/// Starts the reader thread: it reads into a buffer only after the driver handed one over
/// (two to start with), so input waiting in the driver stays bounded.
pub(crate) fn spawn_reader(mut reader: impl Read + Send + 'static, tx: Sender<Input>) -> io::Result<Sender<Vec<u8>>> {
    let (credit, buffers) = mpsc::channel::<Vec<u8>>();
    for _ in 0..READ_BUFFERS {
        let _ = credit.send(vec![0; READ_CHUNK]);
    }
    thread::Builder::new().name("acp-reader".into()).spawn(move || {
        while let Ok(mut buf) = buffers.recv() {
            let input = loop {
                match reader.read(&mut buf) {
                    Ok(0) => break Input::Eof,
                    Ok(n) => break Input::Read(buf, n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => break Input::ReadFailed(e),
                }
            };
            let last = !matches!(input, Input::Read(..));
            if tx.send(input).is_err() || last {
                return;
            }
        }
    })?;
    Ok(credit)
}

/// Starts the writer thread: one `write_all` and one `flush` per batch. It drops (closes) the
/// writer when the driver is gone.
pub(crate) fn spawn_writer(mut writer: impl Write + Send + 'static, tx: Sender<Input>) -> io::Result<Sender<Vec<u8>>> {
    let (batches, rx) = mpsc::channel::<Vec<u8>>();
    thread::Builder::new().name("acp-writer".into()).spawn(move || {
        for batch in rx {
            match writer.write_all(&batch).and_then(|()| writer.flush()) {
                Ok(()) => {
                    if tx.send(Input::Written(batch)).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Input::WriteFailed(e));
                    return;
                }
            }
        }
    })?;
    Ok(batches)
}
