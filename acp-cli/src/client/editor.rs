//! Line editing on a terminal (`rustyline`): history, Tab completion of slash commands, and
//! output that never corrupts the line being typed.
//!
//! The editor runs on the input thread, always reading the next line (so the prompt stays
//! usable while a turn streams), and sends each line to the UI queue like the plain reader
//! does. The UI thread still owns all output: its renderer writes through [`LinePrinter`],
//! which hands complete lines to the editor's external printer; the editor draws them above
//! the prompt and redraws what is being typed. Ctrl-C read by the editor counts as an
//! interrupt (`Interrupts::raise`), Ctrl-D as the end of input. While an elicitation is on
//! screen the lines typed (the answers) are not recorded in the history.
//!
//! The history lives in `$ACP_STATE_DIR/history`, else `$XDG_STATE_HOME/acp/history`, else
//! `~/.local/state/acp/history`, at most [`MAX_HISTORY`] lines; a line starting with a space is
//! not recorded. At shutdown the terminal's modes saved before the editor started are
//! restored, since the editor may still be reading.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use rustyline::completion::Completer;
use rustyline::error::{ReadlineError, Signal};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Config, Context, Editor, ExternalPrinter, Helper};

use super::commands::Completions;
use super::event::UiEvent;
use super::interrupt::Interrupts;

/// Lines kept in the history file.
pub(crate) const MAX_HISTORY: usize = 1000;
/// The largest history file read (one that is larger, or not a regular file, is not used).
const MAX_HISTORY_BYTES: u64 = 4 << 20;
/// A partial line longer than this is shown without waiting for its end.
const MAX_PARTIAL: usize = 64 * 1024;
/// How long the editor gets to draw what is queued before the terminal is restored.
const SETTLE: Duration = Duration::from_millis(50);

/// The history file, from the environment.
pub(crate) fn history_path() -> Option<PathBuf> {
    let absolute = |name: &str| std::env::var_os(name).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(dir) = absolute("ACP_STATE_DIR") {
        return Some(dir.join("history"));
    }
    if let Some(dir) = absolute("XDG_STATE_HOME") {
        return Some(dir.join("acp").join("history"));
    }
    absolute("HOME").map(|home| home.join(".local/state/acp/history"))
}

/// Completes slash commands; no hints, highlighting or validation.
struct Commands(Completions);

impl Completer for Commands {
    type Candidate = String;
    fn complete(&self, line: &str, pos: usize, _: &Context<'_>) -> rustyline::Result<(usize, Vec<String>)> {
        Ok(self.0.candidates(line, pos))
    }
}

impl Hinter for Commands {
    type Hint = String;
}

impl Highlighter for Commands {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(&'s self, prompt: &'p str, _: bool) -> Cow<'b, str> {
        Cow::Borrowed(prompt)
    }
}

impl Validator for Commands {}

impl Helper for Commands {}

type SharedPrinter = Arc<Mutex<Box<dyn ExternalPrinter + Send>>>;

/// The end of a line not printed yet.
#[derive(Default)]
struct Partial {
    bytes: Vec<u8>,
    /// It was shown early (see [`LinePrinter::show_partial`]): the editor already moved to a
    /// new line, so the newline that ends it is not printed again.
    shown: bool,
}

/// A writer that gives the editor whole lines (the editor ends every message with a newline);
/// a partial line is kept until its end comes, or [`LinePrinter::show_partial`].
#[derive(Clone)]
pub(crate) struct LinePrinter {
    printer: SharedPrinter,
    partial: Arc<Mutex<Partial>>,
}

fn print(printer: &SharedPrinter, bytes: &[u8]) -> io::Result<()> {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let mut printer = printer.lock().unwrap_or_else(PoisonError::into_inner);
    printer.print(text).map_err(io::Error::other)
}

impl LinePrinter {
    fn new(printer: &SharedPrinter) -> LinePrinter {
        LinePrinter { printer: printer.clone(), partial: Arc::default() }
    }

    /// Prints the partial line now (when the UI is idle: streamed text stays visible while
    /// the agent pauses); what follows it goes on the next line.
    pub(crate) fn show_partial(&self) {
        let mut partial = self.partial.lock().unwrap_or_else(PoisonError::into_inner);
        if !partial.bytes.is_empty() {
            let bytes = std::mem::take(&mut partial.bytes);
            partial.shown = print(&self.printer, &bytes).is_ok();
        }
    }
}

impl Write for LinePrinter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut partial = self.partial.lock().unwrap_or_else(PoisonError::into_inner);
        let mut data = bytes;
        if std::mem::take(&mut partial.shown) && partial.bytes.is_empty() && data.first() == Some(&b'\n') {
            data = &data[1..];
        }
        partial.bytes.extend_from_slice(data);
        let end = match partial.bytes.iter().rposition(|&b| b == b'\n') {
            Some(at) => at + 1,
            None if partial.bytes.len() > MAX_PARTIAL => partial.bytes.len(),
            None => return Ok(bytes.len()),
        };
        let lines: Vec<u8> = partial.bytes.drain(..end).collect();
        print(&self.printer, &lines)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The running editor: restores the terminal when the client ends.
pub(crate) struct Running {
    #[cfg(unix)]
    saved: Option<rustix::termios::Termios>,
}

impl Running {
    /// Lets the editor draw what is queued, then puts the terminal back as it was.
    pub(crate) fn restore(&self) {
        thread::sleep(SETTLE);
        #[cfg(unix)]
        if let Some(saved) = &self.saved {
            let _ = rustix::termios::tcsetattr(io::stdin(), rustix::termios::OptionalActions::Now, saved);
            // The prompt line the editor left.
            let mut out = crate::outlet::stdout();
            let _ = out.write_all(b"\r\x1b[K");
            let _ = out.flush();
        }
    }
}

/// Starts the editor on its own thread; the two writers the renderer must use from now on
/// (output and errors), or `None` when the editor cannot run here.
pub(crate) fn start(
    tx: SyncSender<UiEvent>,
    interrupts: Arc<Interrupts>,
    completions: Completions,
    eliciting: Arc<AtomicBool>,
) -> Option<(Running, LinePrinter, LinePrinter)> {
    let config =
        Config::builder().max_history_size(MAX_HISTORY).ok()?.history_ignore_space(true).bracketed_paste(false).build();
    let mut editor: Editor<Commands, DefaultHistory> = Editor::with_config(config).ok()?;
    editor.set_helper(Some(Commands(completions)));
    // A history that is not a regular file (a FIFO would block the editor) or that is too large
    // is neither read nor written.
    let usable = |path: &PathBuf| {
        crate::files::check_regular(path, MAX_HISTORY_BYTES)
            .map_or_else(|e| e.kind() == io::ErrorKind::NotFound, |()| true)
    };
    let history = history_path().filter(usable);
    if let Some(path) = &history {
        let _ = editor.load_history(path);
    }
    let printer: Box<dyn ExternalPrinter + Send> = Box::new(editor.create_external_printer().ok()?);
    let printer: SharedPrinter = Arc::new(Mutex::new(printer));
    #[cfg(unix)]
    let running = Running { saved: rustix::termios::tcgetattr(io::stdin()).ok() };
    #[cfg(not(unix))]
    let running = Running {};
    let spawned = thread::Builder::new().name("acp-editor".into()).spawn(move || {
        read_lines(editor, history, tx, interrupts, eliciting);
    });
    spawned.ok()?;
    Some((running, LinePrinter::new(&printer), LinePrinter::new(&printer)))
}

/// The input thread: a line at a time into the UI queue, until Ctrl-D or an error.
fn read_lines(
    mut editor: Editor<Commands, DefaultHistory>,
    history: Option<PathBuf>,
    tx: SyncSender<UiEvent>,
    interrupts: Arc<Interrupts>,
    eliciting: Arc<AtomicBool>,
) {
    loop {
        match editor.readline("> ") {
            Ok(line) => {
                // An answer to an elicitation is not a line to recall.
                let recorded = !eliciting.load(Ordering::Relaxed) && !line.trim().is_empty();
                if recorded {
                    let _ = editor.add_history_entry(line.as_str());
                }
                if let Some(path) = &history
                    && recorded
                {
                    if let Some(dir) = path.parent() {
                        let _ = std::fs::create_dir_all(dir);
                    }
                    let _ = editor.append_history(path);
                }
                if tx.send(UiEvent::Line(line)).is_err() {
                    return;
                }
            }
            Err(ReadlineError::Interrupted | ReadlineError::Signal(Signal::Interrupt)) => interrupts.raise(&tx),
            // A resized window: the editor redraws.
            Err(ReadlineError::Signal(_)) => {}
            Err(_) => {
                let _ = tx.send(UiEvent::InputEnd);
                return;
            }
        }
    }
}
