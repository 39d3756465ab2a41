//! What the client records of a session in the session database ([`crate::store`]): the
//! prompts (`user`), the agent's message text (`agent`, one line per stretch of chunks), its
//! other updates that the client draws (`update`, each its JSON: thoughts joined like the
//! message text, tool calls and their updates, plans, modes, usage, …), the permission
//! questions with the answers drawn (`ask`), how each turn stopped (`note`) and the title, so that `acp sessions show` draws the session again as the client
//! drew it. Written at the end of each turn (one transaction), and at shutdown. What is held
//! between two writes is bounded by the store's transcript cap. (Sessions recorded before
//! have `tool` lines instead of `update` ones: shown as they are.)

use acp_blocking::acp_proto::types::{
    ContentBlock, ContentChunk, RequestPermissionRequest, SessionConfigOption, SessionModeState, SessionUpdate,
    StopReason,
};

use std::collections::HashMap;

use crate::store::{AgentRef, Append, Line, MAX_TRANSCRIPT_BYTES, Store};

/// A session's modes and config options as the journal records them (JSON
/// `{"modes": …, "configOptions": […]}`, [`Store::controls`]) and a reopen reads them back.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Controls {
    pub(crate) modes: Option<SessionModeState>,
    #[serde(default)]
    pub(crate) config_options: Vec<SessionConfigOption>,
}

/// The most sessions of one client run the journal remembers having made records for.
const MAX_MINE: usize = 64;

/// A session being recorded.
#[derive(Debug)]
pub(crate) struct Journal {
    store: Store,
    id: i64,
    /// The agent and the project of the client run (for the records `/new` and `/load` make).
    agent: AgentRef,
    project: String,
    /// The ACP version of the run (what its new records say).
    protocol: u16,
    /// The records this run made or followed, by the agent's session id: a `/load` back to one
    /// of them goes on there, even when an older run recorded a session of the same id.
    mine: HashMap<String, i64>,
    pending: Append,
    /// The agent's message text since the last line.
    text: String,
    /// The agent's thought text since the last line.
    thought: String,
    /// Bytes queued since the last write (bounded by the transcript cap).
    queued: usize,
    /// The modes and config options last written (JSON), so that a write only sends a change.
    controls: Option<String>,
}

/// Where the journal went on after the REPL changed sessions ([`Journal::follow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Followed {
    /// A record made now.
    New(i64),
    /// The record that already had the session.
    Known(i64),
}

impl Journal {
    /// Records the agent's session `session` into the record `id` of `store`; `agent` and
    /// `project` are the run's (the records of later sessions get them).
    pub(crate) fn new(
        store: Store,
        id: i64,
        session: &str,
        agent: AgentRef,
        project: String,
        protocol: u16,
    ) -> Journal {
        let mine = HashMap::from([(session.to_owned(), id)]);
        Journal {
            store,
            id,
            agent,
            project,
            protocol,
            mine,
            pending: Append::default(),
            text: String::new(),
            thought: String::new(),
            queued: 0,
            controls: None,
        }
    }

    /// The REPL went on in the agent's session `session` (`/new`: `fresh`; `/load`): what is
    /// pending is written to the current record, then the journal records into `session`'s:
    /// one this run made or followed, else (not `fresh`) the latest record of the same agent
    /// with that session id, else a new one.
    pub(crate) fn follow(&mut self, session: &str, fresh: bool) -> Result<Followed, String> {
        self.write()?;
        let known = match (fresh, self.mine.get(session)) {
            (true, _) => None,
            (false, Some(&id)) => Some(id),
            (false, None) => self.store.find_session(session, &self.agent)?.map(|r| r.id),
        };
        let followed = match known {
            Some(id) => Followed::Known(id),
            None => Followed::New(self.store.insert(session, &self.agent, &self.project, self.protocol)?),
        };
        let (Followed::New(id) | Followed::Known(id)) = followed;
        self.id = id;
        self.controls = None;
        if self.mine.len() < MAX_MINE || self.mine.contains_key(session) {
            self.mine.insert(session.to_owned(), id);
        }
        Ok(followed)
    }

    /// The session's local id.
    pub(crate) fn id(&self) -> i64 {
        self.id
    }

    fn push(&mut self, kind: &str, text: String) {
        let cap = usize::try_from(MAX_TRANSCRIPT_BYTES).unwrap_or(usize::MAX);
        if self.queued <= cap {
            self.queued += text.len();
            self.pending.lines.push(Line::new(kind, text));
        }
    }

    fn end_text(&mut self) {
        if !self.text.is_empty() {
            let text = std::mem::take(&mut self.text);
            self.push("agent", text);
        }
        if !self.thought.is_empty() {
            let thought = std::mem::take(&mut self.thought);
            let update = SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::text(thought)));
            self.push_update(&update);
        }
    }

    /// An update the client draws, as its JSON.
    fn push_update(&mut self, update: &SessionUpdate) {
        if let Ok(json) = serde_json::to_string(update) {
            self.push("update", json);
        }
    }

    fn room(&self, more: usize) -> bool {
        self.queued + self.text.len() + self.thought.len() + more
            <= usize::try_from(MAX_TRANSCRIPT_BYTES).unwrap_or(usize::MAX)
    }

    /// A prompt was sent; its first line is the title unless the session has one.
    pub(crate) fn prompt(&mut self, text: &str) {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        if !first.is_empty() && self.pending.title.is_none() {
            self.pending.title = Some((first.chars().take(120).collect(), false));
        }
        self.push("user", text.to_owned());
    }

    /// An update of a turn (or one outside a turn).
    pub(crate) fn update(&mut self, update: &SessionUpdate) {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(t) = &chunk.content
                    && self.room(t.text.len())
                {
                    if !self.thought.is_empty() {
                        self.end_text();
                    }
                    self.text.push_str(&t.text);
                }
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                if let ContentBlock::Text(t) = &chunk.content
                    && self.room(t.text.len())
                {
                    if !self.text.is_empty() {
                        self.end_text();
                    }
                    self.thought.push_str(&t.text);
                }
            }
            SessionUpdate::SessionInfoUpdate(info) => {
                if let Some(Some(title)) = &info.title {
                    self.pending.title = Some((title.chars().take(200).collect(), true));
                }
            }
            // A replay (`session/load`) is on the screen already, and so in this record.
            SessionUpdate::UserMessageChunk(_) => {}
            _ => {
                self.end_text();
                self.push_update(update);
            }
        }
    }

    /// A permission question of the agent, and the answer drawn with it (`ask`: JSON
    /// `{"request": …, "decided": …, "why": …}`).
    pub(crate) fn permission(&mut self, request: &RequestPermissionRequest, decided: &str, why: &str) {
        self.end_text();
        let ask = serde_json::json!({ "request": request, "decided": decided, "why": why });
        self.push("ask", ask.to_string());
    }

    /// The turn ended (with `stop`, if it did not fail): writes what it recorded.
    pub(crate) fn end_turn(&mut self, stop: Option<&StopReason>) -> Result<(), String> {
        self.end_text();
        let how = stop.map_or("failed", StopReason::as_str);
        self.push("note", format!("stop: {how}"));
        self.write()
    }

    /// The session's modes and config options now: written with the next write if they
    /// changed, for a reopen whose agent does not say them again ([`Store::controls`]).
    pub(crate) fn controls(&mut self, modes: Option<&SessionModeState>, options: &[SessionConfigOption]) {
        if modes.is_none() && options.is_empty() {
            return;
        }
        let controls = Controls { modes: modes.cloned(), config_options: options.to_vec() };
        let Ok(json) = serde_json::to_string(&controls) else { return };
        if self.controls.as_ref() != Some(&json) {
            self.controls = Some(json.clone());
            self.pending.controls = Some(json);
        }
    }

    /// Writes what is pending (also when nothing is: the updated time moves).
    pub(crate) fn write(&mut self) -> Result<(), String> {
        self.end_text();
        let append = std::mem::take(&mut self.pending);
        self.queued = 0;
        self.store.append(self.id, &append)
    }
}

#[cfg(test)]
mod tests {
    use acp_blocking::acp_proto::types::*;

    use super::*;

    #[test]
    fn the_agents_title_wins_and_text_is_joined() {
        let dir = std::env::temp_dir().join(format!("acp-journal-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut store = Store::open(&dir).unwrap();
        let id = store.insert("s", &AgentRef::Named("a".into()), "/p", 1).unwrap();
        let mut journal = Journal::new(store, id, "s", AgentRef::Named("a".into()), "/p".into(), 1);
        journal.prompt("\n  first line  \nsecond");
        journal.update(&SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text("he"))));
        journal.update(&SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text("llo"))));
        let info = SessionInfoUpdate { title: Some(Some("Agent's title".into())), ..SessionInfoUpdate::default() };
        journal.update(&SessionUpdate::SessionInfoUpdate(info));
        journal.end_turn(Some(&StopReason::EndTurn)).unwrap();
        journal.prompt("another");
        journal.end_turn(None).unwrap();
        let store = Store::open(&dir).unwrap();
        assert_eq!(store.by_id(id).unwrap().unwrap().title.as_deref(), Some("Agent's title"));
        let lines: Vec<(String, String)> =
            store.transcript(id).unwrap().into_iter().map(|l| (l.kind, l.text)).collect();
        let expected = [
            ("user", "\n  first line  \nsecond"),
            ("agent", "hello"),
            ("note", "stop: end_turn"),
            ("user", "another"),
            ("note", "stop: failed"),
        ];
        assert_eq!(lines, expected.map(|(k, t)| (k.to_owned(), t.to_owned())));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
