//! The opt-in content of the newest stable v1 schema: the update kinds the client must
//! advertise, and elicitations (`elicitation/create` in form or URL mode, `elicitation/complete`).
//!
//! The simulation keeps its own table of what each kind needs (independent of the gate's), so
//! a gate that lets something through (or refuses something advertised) fails the run: the
//! agent application checks every send against it, the client application checks every
//! update, elicitation and completion it receives against what it advertised.

use acp_proto::types::*;
use acp_proto::{AgentNotification, Notification, SendError};
use serde_json::Value;

use super::{Chooser, Sim};

/// Counts of the opt-in content the simulation exercised.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptInCounts {
    /// Opt-in updates accepted for sending.
    pub updates_sent: u64,
    /// Opt-in updates refused locally because the client did not advertise their capability.
    pub updates_refused: u64,
    /// Opt-in updates the client received (each checked against what it advertised).
    pub updates_received: u64,
    /// `elicitation/create` requests accepted for sending.
    pub elicitations_sent: u64,
    /// `elicitation/create` requests refused locally (mode not advertised).
    pub elicitations_refused: u64,
    /// Elicitations the client application answered (accept, decline or cancel).
    pub elicitations_answered: u64,
    /// Elicitation outcomes the agent got (each exactly once, checked by the model).
    pub elicitation_outcomes: u64,
    /// `elicitation/complete` notifications accepted for sending.
    pub completes_sent: u64,
    /// `elicitation/complete` notifications refused locally.
    pub completes_refused: u64,
    /// `elicitation/complete` notifications the client received.
    pub completes_received: u64,
}

/// Whether `caps` advertises `path`: the path ends in `true` or an object.
pub(super) fn advertises(caps: Option<&Value>, path: &[&str]) -> bool {
    let Some(caps) = caps else { return false };
    let node = path.iter().try_fold(caps, |v, seg| v.get(seg));
    matches!(node, Some(Value::Bool(true) | Value::Object(_)))
}

/// The simulation's own table: the client capability an update kind needs (`None`: none).
pub(super) fn needed_by_update(update: &SessionUpdate) -> Option<&'static [&'static str]> {
    Some(match update {
        SessionUpdate::PlanUpdate(_) | SessionUpdate::PlanRemoved(_) => &["plan"],
        SessionUpdate::Notice(_) => &["session", "notices"],
        SessionUpdate::CompactionUpdate(_) | SessionUpdate::CompactionSummaryChunk(_) => &["session", "compaction"],
        SessionUpdate::SubagentUpdate(_) | SessionUpdate::SessionMessage(_) | SessionUpdate::SessionMessageChunk(_) => {
            &["subagents"]
        }
        _ => return None,
    })
}

/// The client capability an elicitation's mode needs.
pub(super) fn needed_by_elicitation(request: &CreateElicitationRequest) -> &'static [&'static str] {
    match &request.mode {
        ElicitationMode::Form(_) => &["elicitation", "form"],
        ElicitationMode::Url(_) => &["elicitation", "url"],
        _ => &["elicitation"],
    }
}

/// One opt-in update kind, carrying `text` where it has text.
pub(super) fn opt_in_update<C: Chooser>(c: &mut C, text: String) -> SessionUpdate {
    let block = || ContentBlock::Text(TextContent::new(text.clone()));
    match c.below(8) {
        0 => SessionUpdate::Notice(Notice::new(NoticeSeverity::Info, text.clone())),
        1 => {
            let md = PlanMarkdown { plan_id: "p1".into(), content: text.clone(), path: None, meta: None };
            SessionUpdate::PlanUpdate(PlanUpdate::new(PlanUpdateContent::Markdown(md)))
        }
        2 => SessionUpdate::PlanRemoved(PlanRemoved::new("p1")),
        3 => SessionUpdate::CompactionUpdate(CompactionUpdate::new("k1", CompactionStatus::InProgress)),
        4 => SessionUpdate::CompactionSummaryChunk(CompactionSummaryChunk::new("k1", block())),
        5 => SessionUpdate::SubagentUpdate(Box::new(SubagentUpdate::new("child-1"))),
        6 => SessionUpdate::SessionMessage(SessionMessage::new("m1")),
        _ => SessionUpdate::SessionMessageChunk(SessionMessageChunk::new("m1", block())),
    }
}

/// The client's capabilities: the older ones and each opt-in of the newest schema at random.
pub(super) fn client_capabilities<C: Chooser>(c: &mut C) -> ClientCapabilities {
    let mut caps = ClientCapabilities::default();
    caps.fs.read_text_file = c.chance(1, 2);
    caps.fs.write_text_file = c.chance(1, 2);
    caps.terminal = c.chance(1, 2);
    let notices = c.chance(1, 2).then(NoticeCapabilities::default);
    let compaction = c.chance(1, 2).then(CompactionCapabilities::default);
    if notices.is_some() || compaction.is_some() {
        caps.session = Some(ClientSessionCapabilities { notices, compaction, ..Default::default() });
    }
    caps.plan = c.chance(1, 2).then(PlanCapabilities::default);
    caps.subagents = c.chance(1, 2).then(SubagentCapabilities::default);
    let form = c.chance(1, 2).then(ElicitationFormCapabilities::default);
    let url = c.chance(1, 2).then(ElicitationUrlCapabilities::default);
    if form.is_some() || url.is_some() || c.chance(1, 4) {
        caps.elicitation = Some(ElicitationCapabilities { form, url, meta: None });
    }
    caps
}

impl<C: Chooser> Sim<'_, C> {
    /// The client's own advertised capabilities, once negotiated.
    fn client_own_caps(&self) -> Option<Value> {
        self.client.conn.negotiated().map(|n| n.own.json().clone())
    }

    /// Client: an opt-in update or `elicitation/complete` arrived; it must have been advertised.
    pub(super) fn client_check_opt_in(&mut self, notification: &Notification) {
        let own = self.client_own_caps();
        match notification {
            Notification::Agent(AgentNotification::SessionUpdate(n)) => {
                if let Some(path) = needed_by_update(&n.update) {
                    assert!(
                        advertises(own.as_ref(), path),
                        "the client received {path:?} content it did not advertise"
                    );
                    self.summary.opt_in.updates_received += 1;
                }
            }
            Notification::Agent(AgentNotification::CompleteElicitation(_)) => {
                let path = &["elicitation", "url"];
                assert!(advertises(own.as_ref(), path), "elicitation/complete to a client without elicitation.url");
                self.summary.opt_in.completes_received += 1;
            }
            _ => {}
        }
    }

    /// Client: an elicitation arrived; its mode must have been advertised.
    pub(super) fn client_check_elicitation(&self, request: &CreateElicitationRequest) {
        let path = needed_by_elicitation(request);
        let own = self.client_own_caps();
        assert!(advertises(own.as_ref(), path), "the client received an elicitation needing {path:?}");
    }

    /// Agent: sends `elicitation/complete` for a URL elicitation id (known or not).
    pub(super) fn agent_complete_elicitation(&mut self) {
        let label = self.label();
        let n: Notification = CompleteElicitationNotification::new(format!("e{label}")).into();
        let allowed = advertises(self.agent.peer_caps.as_ref(), &["elicitation", "url"]);
        let before = self.agent.conn.bytes_queued();
        let r = self.agent.conn.send_notification::<acp_proto::V1>(self.now, n.clone()).map_err(|refused| {
            assert_eq!(refused.message, n, "a refused notification comes back untouched");
            refused.error
        });
        self.agent.note_app_output(before);
        self.log(format!("agent elicitation/complete e{label} -> {r:?}"));
        match r {
            Ok(()) => {
                assert!(allowed, "elicitation/complete accepted for a client without elicitation.url");
                self.summary.opt_in.completes_sent += 1;
            }
            Err(SendError::NotSupportedByPeer { .. }) => {
                assert!(!allowed, "elicitation/complete refused for a client with elicitation.url");
                self.summary.opt_in.completes_refused += 1;
            }
            Err(SendError::Backpressure { .. }) => {}
            Err(e) => panic!("agent: elicitation/complete refused: {e}"),
        }
    }

    /// Agent: asks for a form or a URL visit in one of its sessions.
    pub(super) fn agent_elicit(&mut self) {
        if self.agent.sessions.is_empty() {
            return;
        }
        let s = self.c.pick(&self.agent.sessions).clone();
        let label = self.label();
        let request = if self.c.chance(1, 2) {
            CreateElicitationRequest::form(format!("r{label}"), s.as_str(), ElicitationSchema::new())
        } else {
            let url = format!("https://example.com/r{label}");
            CreateElicitationRequest::url(format!("r{label}"), s.as_str(), format!("e{label}"), url)
        };
        let deadline = self.deadline();
        self.agent_send(label, acp_proto::AgentRequest::from(request).into(), deadline);
    }
}
