//! The sessions `acp client` remembers (issue 17 §2), in an embedded SQLite database.
//!
//! The database is `sessions.db` in `$ACP_STATE_DIR`, else `$XDG_STATE_HOME/acp`, else
//! `~/.local/state/acp`: a regular file (created private); anything else there (a FIFO, a
//! device, a directory) is refused, naming it. It is opened in WAL mode with a busy timeout
//! ([`BUSY_TIMEOUT`]), every write is one `BEGIN IMMEDIATE` transaction, and the schema is
//! versioned with `PRAGMA user_version` ([`SCHEMA_VERSION`]), so that several `acp` processes
//! can record sessions at once.
//!
//! Each session has a local id (the number `acp sessions` shows and `--resume` takes), the
//! agent's session id, the agent (its config name, or its command line), the project (the
//! canonical working directory), a title (the agent's `session_info_update` title, else the
//! first line of the first prompt), its created, updated and closed times, and the transcript
//! of what was rendered: prompts, the agent's message text, the other updates the client drew
//! (as JSON), stop reasons. A transcript keeps at most [`MAX_TRANSCRIPT_BYTES`]; past that one
//! line says it was cut.

mod time;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

pub use time::{format_time, now, rfc3339};

/// The schema version in `PRAGMA user_version`.
pub const SCHEMA_VERSION: i64 = 3;
/// How long a writer waits for another process's transaction.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// The most transcript text kept per session (the updates' JSON counted).
pub const MAX_TRANSCRIPT_BYTES: i64 = 1024 * 1024;
/// The line that replaces what is past [`MAX_TRANSCRIPT_BYTES`].
pub const TRUNCATED: &str = "[transcript truncated at 1 MiB]";

const SCHEMA_V1: &str = "
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    named INTEGER NOT NULL,
    argv TEXT NOT NULL,
    project TEXT NOT NULL,
    title TEXT,
    title_from_agent INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    closed_at INTEGER,
    transcript_bytes INTEGER NOT NULL DEFAULT 0,
    truncated INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_project ON sessions(project, updated_at);
CREATE TABLE transcript (
    session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (session, seq)
);
";

/// Version 2: the session's last modes and config options (`controls`: JSON
/// `{"modes": …, "configOptions": […]}`, as the agent sent them), for an agent that does not
/// say them again when the session is reopened.
const SCHEMA_V2: &str = "ALTER TABLE sessions ADD COLUMN controls TEXT;";

/// Version 3: the ACP version the session was spoken in (`protocol`: 1 or 2), which
/// `--resume`/`--continue` speak again; sessions recorded before it were v1's.
const SCHEMA_V3: &str = "ALTER TABLE sessions ADD COLUMN protocol INTEGER NOT NULL DEFAULT 1;";

/// The agent a session was recorded with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentRef {
    /// A named agent of the config file.
    Named(String),
    /// A command line.
    Command(Vec<String>),
}

impl AgentRef {
    /// The name, or the command line joined by spaces.
    pub fn label(&self) -> String {
        match self {
            AgentRef::Named(name) => name.clone(),
            AgentRef::Command(argv) => argv.join(" "),
        }
    }
}

/// One remembered session.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The local id.
    pub id: i64,
    /// The agent's session id.
    pub session_id: String,
    /// The agent.
    pub agent: AgentRef,
    /// The canonical project directory (the session's cwd).
    pub project: String,
    /// The title, if there is one yet.
    pub title: Option<String>,
    /// Unix seconds.
    pub created: i64,
    /// Unix seconds of the last write.
    pub updated: i64,
    /// Unix seconds of `acp sessions close`, if it was closed.
    pub closed: Option<i64>,
    /// The ACP version it was spoken in (1 or 2).
    pub protocol: u16,
}

/// A line of a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// `user`, `agent`, `tool` or `note`.
    pub kind: String,
    /// The text.
    pub text: String,
}

impl Line {
    /// A line of `kind`.
    pub fn new(kind: &str, text: impl Into<String>) -> Line {
        Line { kind: kind.to_owned(), text: text.into() }
    }
}

/// What one write adds to a session.
#[derive(Debug, Clone, Default)]
pub struct Append {
    /// A title: `(text, from the agent)`. The agent's title replaces any; a first prompt's
    /// only fills an empty one.
    pub title: Option<(String, bool)>,
    /// Transcript lines.
    pub lines: Vec<Line>,
    /// The session's modes and config options now (JSON), replacing those stored.
    pub controls: Option<String>,
}

/// The database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// The state directory: `$ACP_STATE_DIR`, `$XDG_STATE_HOME/acp` or `~/.local/state/acp`.
pub fn state_dir() -> Option<PathBuf> {
    use crate::files::non_empty_var;
    if let Some(dir) = non_empty_var("ACP_STATE_DIR") {
        return Some(PathBuf::from(dir));
    }
    let base = non_empty_var("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| non_empty_var("HOME").map(|home| Path::new(&home).join(".local").join("state")))?;
    Some(base.join("acp"))
}

fn sql(e: rusqlite::Error) -> String {
    format!("session database: {e}")
}

/// A failure of setting the database up: `Yes` when another connection held it (worth
/// retrying), `No` otherwise.
enum Busy {
    Yes(String),
    No(String),
}

impl From<rusqlite::Error> for Busy {
    fn from(e: rusqlite::Error) -> Busy {
        let busy = matches!(
            &e,
            rusqlite::Error::SqliteFailure(f, _)
                if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        );
        if busy { Busy::Yes(sql(e)) } else { Busy::No(sql(e)) }
    }
}

impl Store {
    /// Opens (creating it if needed) the database in [`state_dir`].
    pub fn open_default() -> Result<Store, String> {
        let dir = state_dir().ok_or("no state directory: set ACP_STATE_DIR, XDG_STATE_HOME or HOME")?;
        Store::open(&dir)
    }

    /// Opens (creating it if needed) `DIR/sessions.db`.
    pub fn open(dir: &Path) -> Result<Store, String> {
        // Private: transcripts hold what the user typed.
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let path = dir.join("sessions.db");
        // A FIFO, a device or a directory is refused here, named and said what it is (SQLite
        // says `disk I/O error` of the first two). SQLite then opens it by its path again: the
        // directory is private.
        crate::files::open_or_create_regular(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        let conn = Connection::open(&path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sql)?;
        let mut store = Store { conn, path };
        store.set_up()?;
        Ok(store)
    }

    /// WAL mode and the schema, retried while another process holds the database. Switching a
    /// new database to WAL needs it to itself, and SQLite answers `SQLITE_BUSY` at once there
    /// rather than calling the busy handler: clients started together on a fresh database would
    /// otherwise lose the race and record nothing.
    fn set_up(&mut self) -> Result<(), String> {
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            let attempt =
                self.conn.pragma_update(None, "journal_mode", "WAL").map_err(Busy::from).and_then(|()| self.migrate());
            match attempt {
                Err(Busy::Yes(_)) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(Busy::Yes(e) | Busy::No(e)) => return Err(e),
                Ok(()) => return Ok(()),
            }
        }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn migrate(&mut self) -> Result<(), Busy> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version > SCHEMA_VERSION {
            return Err(Busy::No(format!(
                "{} has schema version {version}, newer than this acp's ({SCHEMA_VERSION}); use a newer acp",
                self.path.display()
            )));
        }
        if version < 1 {
            tx.execute_batch(SCHEMA_V1)?;
        }
        if version < 2 {
            tx.execute_batch(SCHEMA_V2)?;
        }
        if version < 3 {
            tx.execute_batch(SCHEMA_V3)?;
        }
        if version < SCHEMA_VERSION {
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        Ok(tx.commit()?)
    }

    /// Records a new session, spoken in ACP version `protocol`; returns its local id.
    pub fn insert(&mut self, session_id: &str, agent: &AgentRef, project: &str, protocol: u16) -> Result<i64, String> {
        let (named, argv) = match agent {
            AgentRef::Named(_) => (1, "[]".to_owned()),
            AgentRef::Command(argv) => (0, serde_json::to_string(argv).unwrap_or_else(|_| "[]".to_owned())),
        };
        let at = now();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        tx.execute(
            "INSERT INTO sessions (session_id, agent, named, argv, project, created_at, updated_at, protocol)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
            params![session_id, agent.label(), named, argv, project, at, protocol],
        )
        .map_err(sql)?;
        let id = tx.last_insert_rowid();
        tx.commit().map_err(sql)?;
        Ok(id)
    }

    /// Adds a title and transcript lines to session `id`, and touches its updated time.
    pub fn append(&mut self, id: i64, append: &Append) -> Result<(), String> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        let (mut bytes, mut truncated, mut seq): (i64, bool, i64) = tx
            .query_row(
                "SELECT transcript_bytes, truncated,
                        (SELECT COALESCE(MAX(seq), 0) FROM transcript WHERE session = ?1)
                 FROM sessions WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(sql)?;
        match &append.title {
            Some((title, true)) => {
                tx.execute("UPDATE sessions SET title = ?2, title_from_agent = 1 WHERE id = ?1", params![id, title])
            }
            Some((title, false)) => {
                tx.execute("UPDATE sessions SET title = ?2 WHERE id = ?1 AND title IS NULL", params![id, title])
            }
            None => Ok(0),
        }
        .map_err(sql)?;
        if let Some(controls) = &append.controls {
            tx.execute("UPDATE sessions SET controls = ?2 WHERE id = ?1", params![id, controls]).map_err(sql)?;
        }
        for line in &append.lines {
            if truncated {
                break;
            }
            let len = i64::try_from(line.text.len()).unwrap_or(i64::MAX);
            let (kind, text) = if bytes.saturating_add(len) > MAX_TRANSCRIPT_BYTES {
                truncated = true;
                ("note", TRUNCATED)
            } else {
                (line.kind.as_str(), line.text.as_str())
            };
            seq += 1;
            bytes = bytes.saturating_add(len.min(MAX_TRANSCRIPT_BYTES));
            tx.execute(
                "INSERT INTO transcript (session, seq, kind, text) VALUES (?1, ?2, ?3, ?4)",
                params![id, seq, kind, text],
            )
            .map_err(sql)?;
        }
        tx.execute(
            "UPDATE sessions SET transcript_bytes = ?2, truncated = ?3, updated_at = ?4 WHERE id = ?1",
            params![id, bytes, truncated, now()],
        )
        .map_err(sql)?;
        tx.commit().map_err(sql)
    }

    /// The modes and config options last recorded for session `id` (JSON), if any were.
    pub fn controls(&self, id: i64) -> Result<Option<String>, String> {
        self.conn
            .query_row("SELECT controls FROM sessions WHERE id = ?1", [id], |r| r.get(0))
            .optional()
            .map(Option::flatten)
            .map_err(sql)
    }

    /// The session with local id `key`, or else the one whose agent session id is `key`
    /// (an error when several agents used that id).
    pub fn find(&self, key: &str) -> Result<Record, String> {
        if let Ok(id) = key.parse::<i64>()
            && let Some(record) = self.by_id(id)?
        {
            return Ok(record);
        }
        let mut found = self.query("WHERE session_id = ?1 ORDER BY id", [key])?;
        match found.len() {
            0 => Err(format!("no session `{key}` (see `acp sessions list --all`)")),
            1 => Ok(found.remove(0)),
            _ => {
                let ids: Vec<String> = found.iter().map(|r| r.id.to_string()).collect();
                Err(format!("several sessions have the agent session id `{key}`: use a local id ({})", ids.join(", ")))
            }
        }
    }

    /// The session with local id `id`.
    pub fn by_id(&self, id: i64) -> Result<Option<Record>, String> {
        Ok(self.query("WHERE id = ?1", [id])?.pop())
    }

    /// The sessions of `project` (all of them with `None`), the latest first.
    pub fn list(&self, project: Option<&str>) -> Result<Vec<Record>, String> {
        match project {
            Some(project) => self.query("WHERE project = ?1 ORDER BY updated_at DESC, id DESC", [project]),
            None => self.query("ORDER BY updated_at DESC, id DESC", []),
        }
    }

    /// The latest open session of `project` with `agent`, spoken in ACP version `protocol` when
    /// one is given.
    pub fn latest_open(
        &self,
        project: &str,
        agent: &AgentRef,
        protocol: Option<u16>,
    ) -> Result<Option<Record>, String> {
        let named = matches!(agent, AgentRef::Named(_));
        let found = self.query(
            "WHERE project = ?1 AND agent = ?2 AND named = ?3 AND closed_at IS NULL AND (?4 IS NULL OR protocol = ?4)
             ORDER BY updated_at DESC, id DESC LIMIT 1",
            params![project, agent.label(), named, protocol],
        )?;
        Ok(found.into_iter().next())
    }

    /// The latest session of `agent` with the agent's session id `session_id`, if any.
    pub fn find_session(&self, session_id: &str, agent: &AgentRef) -> Result<Option<Record>, String> {
        let named = matches!(agent, AgentRef::Named(_));
        let found = self.query(
            "WHERE session_id = ?1 AND agent = ?2 AND named = ?3 ORDER BY id DESC LIMIT 1",
            params![session_id, agent.label(), named],
        )?;
        Ok(found.into_iter().next())
    }

    fn query(&self, tail: &str, args: impl rusqlite::Params) -> Result<Vec<Record>, String> {
        let sql_text = format!(
            "SELECT id, session_id, agent, named, argv, project, title, created_at, updated_at, closed_at, protocol
             FROM sessions {tail}"
        );
        let mut statement = self.conn.prepare(&sql_text).map_err(sql)?;
        let rows = statement
            .query_map(args, |r| {
                let named: bool = r.get(3)?;
                let agent = if named {
                    AgentRef::Named(r.get(2)?)
                } else {
                    AgentRef::Command(serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or_default())
                };
                Ok(Record {
                    id: r.get(0)?,
                    session_id: r.get(1)?,
                    agent,
                    project: r.get(5)?,
                    title: r.get(6)?,
                    created: r.get(7)?,
                    updated: r.get(8)?,
                    closed: r.get(9)?,
                    // Out of range (a database written by hand): a version no acp speaks.
                    protocol: u16::try_from(r.get::<_, i64>(10)?).unwrap_or(u16::MAX),
                })
            })
            .map_err(sql)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(sql)
    }

    /// The transcript of session `id`, in order.
    pub fn transcript(&self, id: i64) -> Result<Vec<Line>, String> {
        let mut statement =
            self.conn.prepare("SELECT kind, text FROM transcript WHERE session = ?1 ORDER BY seq").map_err(sql)?;
        let rows = statement.query_map([id], |r| Ok(Line { kind: r.get(0)?, text: r.get(1)? })).map_err(sql)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(sql)
    }

    /// Marks session `id` closed; `false` if there is no such session or it already was.
    pub fn close(&mut self, id: i64) -> Result<bool, String> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        let changed = tx
            .execute("UPDATE sessions SET closed_at = ?2 WHERE id = ?1 AND closed_at IS NULL", params![id, now()])
            .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(changed == 1)
    }

    /// Forgets the sessions not updated for `days` days, with their transcripts; returns how
    /// many.
    pub fn prune(&mut self, days: u64) -> Result<usize, String> {
        let cutoff = now().saturating_sub(i64::try_from(days.saturating_mul(86_400)).unwrap_or(i64::MAX));
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(sql)?;
        tx.execute("DELETE FROM transcript WHERE session IN (SELECT id FROM sessions WHERE updated_at < ?1)", [cutoff])
            .map_err(sql)?;
        let n = tx.execute("DELETE FROM sessions WHERE updated_at < ?1", [cutoff]).map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(n)
    }

    /// Sets the updated time of session `id` (tests age sessions with it).
    #[doc(hidden)]
    pub fn set_updated(&mut self, id: i64, at: i64) -> Result<(), String> {
        self.conn.execute("UPDATE sessions SET updated_at = ?2 WHERE id = ?1", params![id, at]).map_err(sql)?;
        Ok(())
    }

    /// `PRAGMA integrity_check`: `ok`, or what is wrong.
    pub fn integrity_check(&self) -> Result<String, String> {
        self.conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .optional()
            .map_err(sql)
            .map(Option::unwrap_or_default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_titles_and_caps_the_transcript() {
        let dir = std::env::temp_dir().join(format!("acp-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut store = Store::open(&dir).unwrap();
        let agent = AgentRef::Command(vec!["acp".into(), "agent".into()]);
        let id = store.insert("s-1", &agent, "/p", 1).unwrap();
        let mut append =
            Append { title: Some(("first".into(), false)), lines: vec![Line::new("user", "hi")], controls: None };
        store.append(id, &append).unwrap();
        append.title = Some(("second".into(), false));
        append.lines = vec![Line::new("agent", "x".repeat(MAX_TRANSCRIPT_BYTES as usize))];
        store.append(id, &append).unwrap();
        let record = store.find("s-1").unwrap();
        assert_eq!(record.title.as_deref(), Some("first"));
        assert_eq!(record.agent, agent);
        let lines = store.transcript(id).unwrap();
        assert_eq!(lines, [Line::new("user", "hi"), Line::new("note", TRUNCATED)]);
        assert_eq!(store.latest_open("/p", &agent, None).unwrap().map(|r| r.id), Some(id));
        // A later session in v2: the latest of any version, but not of v1.
        let v2 = store.insert("s-2", &agent, "/p", 2).unwrap();
        store.set_updated(v2, now() + 1).unwrap();
        assert_eq!(store.latest_open("/p", &agent, None).unwrap().map(|r| r.id), Some(v2));
        assert_eq!(store.latest_open("/p", &agent, Some(2)).unwrap().map(|r| r.id), Some(v2));
        assert_eq!(store.latest_open("/p", &agent, Some(1)).unwrap().map(|r| r.id), Some(id));
        assert!(store.close(v2).unwrap());
        assert!(store.close(id).unwrap());
        assert_eq!(store.latest_open("/p", &agent, None).unwrap(), None);
        store.set_updated(id, 0).unwrap();
        assert_eq!(store.prune(1).unwrap(), 1);
        assert!(store.transcript(id).unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A version 1 database (no `controls` or `protocol` column) is migrated in place, its
    /// sessions kept (as v1's); the controls last written are the ones read back, and a write
    /// without any keeps them; a new session records its version.
    #[test]
    fn a_version_1_database_gains_the_controls_and_keeps_its_sessions() {
        let dir = std::env::temp_dir().join(format!("acp-store-v1-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let old = Connection::open(dir.join("sessions.db")).unwrap();
        old.execute_batch(SCHEMA_V1).unwrap();
        old.pragma_update(None, "user_version", 1).unwrap();
        old.execute(
            "INSERT INTO sessions (session_id, agent, named, argv, project, created_at, updated_at)
             VALUES ('s-old', 'ref', 1, '[]', '/p', 1, 1)",
            [],
        )
        .unwrap();
        drop(old);
        let mut store = Store::open(&dir).unwrap();
        let version: i64 = store.conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let found = store.find("s-old").unwrap();
        assert_eq!(found.protocol, 1, "sessions recorded before the column were v1's");
        let id = found.id;
        assert_eq!(store.controls(id).unwrap(), None);
        let controls = r#"{"modes":null,"configOptions":[]}"#.to_owned();
        store.append(id, &Append { controls: Some(controls.clone()), ..Append::default() }).unwrap();
        store.append(id, &Append::default()).unwrap();
        assert_eq!(store.controls(id).unwrap(), Some(controls));
        assert_eq!(store.controls(id + 1).unwrap(), None);
        let v2 = store.insert("s-new", &AgentRef::Named("ref".into()), "/p", 2).unwrap();
        assert_eq!(store.by_id(v2).unwrap().map(|r| r.protocol), Some(2));
        drop(store);
        assert!(Store::open(&dir).is_ok(), "a migrated database opens again");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Clients started together on a machine with no database yet all open it: each waits
    /// for the others instead of failing (a lost race used to leave a session unrecorded).
    #[test]
    fn many_openers_of_a_new_database_all_succeed() {
        for round in 0..20 {
            let dir = std::env::temp_dir().join(format!("acp-store-race-{}-{round}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let openers: Vec<_> = (0..8)
                .map(|_| {
                    let dir = dir.clone();
                    std::thread::spawn(move || Store::open(&dir).map(|_| ()))
                })
                .collect();
            for opener in openers {
                opener.join().unwrap().unwrap_or_else(|e| panic!("round {round}: {e}"));
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
