//! `acp agents`, `acp config show|path` and `acp sessions list|show|close|prune`: what the
//! config file and the session database hold (issue 17 §1 and §2).

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use acp_blocking::acp_proto::types::{InitializeRequest, ListSessionsRequest, ProtocolVersion, SessionInfo};
use acp_blocking::{Client, ClientConnection, ClientOptions};

use crate::Exit;
use crate::config::{AgentEntry, Loaded};
use crate::sanitize::{clean, clean_line};
use crate::store::{AgentRef, Record, Store, format_time};

/// How many pages of the agent's `session/list` are read at most.
const MAX_LIST_PAGES: usize = 20;

/// Prints an error prefixed with `acp` (inert: it may quote an agent) and returns
/// [`Exit::Failure`].
pub fn fail(e: &str) -> Exit {
    eprintln!("acp: {}", clean_line(e));
    Exit::Failure
}

/// `acp agents`: each named agent and its command line.
pub fn agents(loaded: &Loaded) -> Exit {
    let mut out = std::io::stdout().lock();
    if loaded.config.agents.is_empty() {
        let _ = writeln!(
            out,
            "no named agents ({}{})",
            loaded.path.display(),
            if loaded.exists { "" } else { ": no such file" }
        );
        return Exit::Ok;
    }
    let width = loaded.config.agents.keys().map(String::len).max().unwrap_or(0);
    for (name, agent) in &loaded.config.agents {
        let _ = writeln!(out, "{name:width$}  {}", shown_command(&agent.command));
    }
    Exit::Ok
}

/// A command line for display: arguments with spaces or quotes are quoted.
fn shown_command(argv: &[String]) -> String {
    let words: Vec<String> = argv
        .iter()
        .map(|a| if a.is_empty() || a.contains([' ', '"', '\'', '\\']) { format!("{a:?}") } else { a.clone() })
        .collect();
    words.join(" ")
}

/// `acp config show`: the file's path, then the effective config as TOML.
pub fn config_show(loaded: &Loaded) -> Exit {
    let state = if loaded.exists { "" } else { " (no such file: the defaults apply)" };
    println!("# {}{state}", loaded.path.display());
    print!("{}", loaded.config.to_toml());
    Exit::Ok
}

/// The project directory of `cwd`: its canonical path.
pub fn project_of(cwd: &Path) -> String {
    std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf()).display().to_string()
}

/// `acp sessions list`: this project's sessions (all with `all`), and with `agent` the agent's
/// own `session/list` beside them.
pub fn sessions_list(all: bool, agent: Option<(&str, &AgentEntry)>) -> Exit {
    let Ok(cwd) = std::env::current_dir() else { return fail("cannot determine the working directory") };
    let project = project_of(&cwd);
    let store = match Store::open_default() {
        Ok(store) => store,
        Err(e) => return fail(&e),
    };
    let records = match store.list(if all { None } else { Some(&project) }) {
        Ok(records) => records,
        Err(e) => return fail(&e),
    };
    let mut out = std::io::stdout().lock();
    if records.is_empty() {
        let place = if all { "anywhere".to_owned() } else { format!("in {project} (--all for every project)") };
        let _ = writeln!(out, "no sessions recorded {place}");
    } else {
        let _ =
            writeln!(out, "{:>4}  {:<6}  {:<20}  {:<16}  {:<20}  TITLE", "ID", "STATE", "UPDATED", "AGENT", "SESSION");
        for record in &records {
            let _ = writeln!(out, "{}", list_line(record, all));
        }
    }
    drop(out);
    match agent {
        Some((name, entry)) => agent_list(name, entry, &project),
        None => Exit::Ok,
    }
}

/// One session of `acp sessions list`. The agent's session id and title were recorded from
/// the agent, so every field is printed inert.
fn list_line(record: &Record, all: bool) -> String {
    let state = if record.closed.is_some() { "closed" } else { "open" };
    let mut line = format!(
        "{:>4}  {state:<6}  {:<20}  {:<16}  {:<20}  {}",
        record.id,
        format_time(record.updated),
        clip(&record.agent.label(), 16),
        clip(&record.session_id, 20),
        clean_line(record.title.as_deref().unwrap_or("-")),
    );
    if all {
        line.push_str(&format!("  ({})", clean_line(&record.project)));
    }
    line
}

/// `text` made inert, cut to `n` characters (the last one `…` when cut).
fn clip(text: &str, n: usize) -> String {
    let text = clean_line(text);
    if text.chars().count() <= n { text.into_owned() } else { text.chars().take(n - 1).chain(['…']).collect() }
}

/// The client of `acp sessions list --agent`: it serves nothing.
struct Lister;
impl Client for Lister {}

/// The agent's own `session/list` of `project`, when it advertises it.
fn agent_list(name: &str, entry: &AgentEntry, project: &str) -> Exit {
    let (program, args) = match entry.command.split_first() {
        Some(split) => split,
        None => return fail(&format!("agent `{name}` has no command")),
    };
    let mut command = Command::new(program);
    command.args(args).envs(&entry.env);
    if let Some(cwd) = &entry.cwd {
        command.current_dir(cwd);
    }
    let conn = match ClientConnection::spawn(Lister, command, ClientOptions::default()) {
        Ok(conn) => conn,
        Err(e) => return fail(&format!("could not start agent `{name}`: {e}")),
    };
    let requester = conn.with_timeout(Duration::from_secs(30));
    let listed =
        requester.initialize(InitializeRequest::new(ProtocolVersion::V1)).map_err(|e| e.to_string()).and_then(|init| {
            if init.agent_capabilities.session_capabilities.list.is_none() {
                return Ok(None);
            }
            let mut sessions: Vec<SessionInfo> = Vec::new();
            let mut cursor = None;
            for _ in 0..MAX_LIST_PAGES {
                let mut request =
                    ListSessionsRequest { cwd: Some(project.to_owned()), ..ListSessionsRequest::default() };
                request.cursor = cursor.take();
                let page = requester.list_sessions(request).map_err(|e| e.to_string())?;
                sessions.extend(page.sessions);
                cursor = page.next_cursor;
                if cursor.is_none() {
                    break;
                }
            }
            Ok(Some(sessions))
        });
    let _ = conn.close();
    let mut out = std::io::stdout().lock();
    match listed {
        Ok(None) => {
            let _ = writeln!(out, "\nagent `{name}` does not advertise session/list");
            Exit::Ok
        }
        Ok(Some(sessions)) => {
            let _ = writeln!(out, "\nagent `{name}` lists {} session(s) in {project} (session/list):", sessions.len());
            for s in sessions {
                let updated = s.updated_at.as_deref().unwrap_or("-");
                let _ = writeln!(
                    out,
                    "  {:<20}  {:<24}  {}",
                    clean_line(s.session_id.as_ref()),
                    clean_line(updated),
                    clean_line(s.title.as_deref().unwrap_or("-"))
                );
            }
            Exit::Ok
        }
        Err(e) => fail(&format!("agent `{name}`: session/list failed: {e}")),
    }
}

/// `acp sessions show ID`: the session's record and transcript.
pub fn sessions_show(key: &str) -> Exit {
    let result = Store::open_default().and_then(|store| {
        let record = store.find(key)?;
        let lines = store.transcript(record.id)?;
        Ok((record, lines))
    });
    let (record, lines) = match result {
        Ok(found) => found,
        Err(e) => return fail(&e),
    };
    let mut out = std::io::stdout().lock();
    let agent = match &record.agent {
        AgentRef::Named(name) => format!("{name} (named agent)"),
        AgentRef::Command(argv) => shown_command(argv),
    };
    let state = record.closed.map_or_else(|| "open".to_owned(), |at| format!("closed {}", format_time(at)));
    // The agent's session id, title and words were recorded from the agent: printed inert.
    let _ = writeln!(out, "session {} · agent session id {}", record.id, clean_line(&record.session_id));
    let _ = writeln!(out, "agent    {} · ACP v{}", clean_line(&agent), record.protocol);
    let _ = writeln!(out, "project  {}", clean_line(&record.project));
    let _ = writeln!(out, "title    {}", clean_line(record.title.as_deref().unwrap_or("-")));
    let _ =
        writeln!(out, "created  {} · updated {} · {state}", format_time(record.created), format_time(record.updated));
    let _ = writeln!(out);
    let _ = out.flush();
    drop(out);
    draw(&lines);
    Exit::Ok
}

/// A permission question as the journal records it, with the answer drawn.
#[derive(serde::Deserialize)]
struct Asked {
    request: acp_blocking::acp_proto::types::RequestPermissionRequest,
    decided: String,
    why: String,
}

/// A recorded transcript, drawn by the client's renderer as the client drew it (on stdout,
/// in colour on a terminal): prompts, the agent's text and its other updates, each turn's
/// end. Lines of older records (`tool: …`) and anything unreadable are shown as text, inert.
fn draw(lines: &[crate::store::Line]) {
    use acp_blocking::acp_proto::types::{ContentBlock, ContentChunk, SessionUpdate, StopReason};
    let style = crate::client::Style { spinner: false, ..crate::client::Style::detect() };
    let mut render =
        crate::client::Renderer::new(Box::new(crate::outlet::stdout()), Box::new(std::io::stderr()), style);
    for line in lines {
        match line.kind.as_str() {
            // The renderer makes peer text inert itself (as the live client's).
            "user" => render.heading(&format!("> {}", line.text)),
            "agent" => {
                let chunk = ContentChunk::new(ContentBlock::text(line.text.as_str()));
                render.update(&SessionUpdate::AgentMessageChunk(chunk));
            }
            "update" => match serde_json::from_str::<SessionUpdate>(&line.text) {
                Ok(update) => render.update(&update),
                Err(_) => render.info(&clean(&line.text)),
            },
            "note" => match line.text.strip_prefix("stop: ").map(|s| serde_json::from_value::<StopReason>(s.into())) {
                Some(Ok(stop)) => render.end_turn(&stop),
                _ => render.info(&format!("-- {}", clean(&line.text))),
            },
            "ask" => match serde_json::from_str::<Asked>(&line.text) {
                Ok(asked) => {
                    render.permission_question(&asked.request, false);
                    render.permission_decided(&asked.decided, &asked.why);
                }
                Err(_) => render.info(&clean(&line.text)),
            },
            "tool" => render.info(&format!("tool: {}", clean(&line.text))),
            _ => render.info(&clean(&line.text)),
        }
    }
    render.finish();
}

/// `acp sessions close ID`.
pub fn sessions_close(key: &str) -> Exit {
    let result = Store::open_default().and_then(|mut store| {
        let record = store.find(key)?;
        Ok((record.id, store.close(record.id)?))
    });
    match result {
        Ok((id, true)) => {
            println!("session {id} closed");
            Exit::Ok
        }
        Ok((id, false)) => {
            println!("session {id} was already closed");
            Exit::Ok
        }
        Err(e) => fail(&e),
    }
}

/// `acp sessions prune --older-than DAYS`.
pub fn sessions_prune(days: u64) -> Exit {
    match Store::open_default().and_then(|mut store| store.prune(days)) {
        Ok(n) => {
            println!("pruned {n} session(s) not updated for {days} day(s)");
            Exit::Ok
        }
        Err(e) => fail(&e),
    }
}
