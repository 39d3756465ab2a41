//! v2 elicitations in the simulation (feature `unstable_protocol_v2`; see `v2`): the agent asks
//! (form or URL, scoped to a session or to a request), the client answers (accept, decline,
//! cancel), the agent cancels the ones of a session whose work was cancelled or closed
//! (`$/cancel_request`, the docs' MUST), and follows an accepted URL one with
//! `elicitation/complete`.

use acp_proto::v2::{self, CreateElicitationRequestKind, CreateElicitationResponseKind, ElicitationScope};
use acp_proto::{OutboundId, RpcError, SendError};
use serde_json::json;

use super::opt_in::advertises;
use super::v2::typed;
use super::{Chooser, Out, Sim};

/// The mode of an elicitation (`form` or `url`).
fn mode_of(e: &v2::CreateElicitationRequest) -> &'static str {
    match &e.kind {
        CreateElicitationRequestKind::Url(_) => "url",
        _ => "form",
    }
}

/// The session an elicitation is scoped to, if it is.
pub(super) fn session_of(e: &v2::CreateElicitationRequest) -> Option<String> {
    let scope = match &e.kind {
        CreateElicitationRequestKind::Form(f) => &f.scope,
        CreateElicitationRequestKind::Url(u) => &u.scope,
        _ => return None,
    };
    match scope {
        ElicitationScope::Session(s) => Some(s.session_id.as_str().to_owned()),
        ElicitationScope::Request(_) => None,
    }
}

impl<C: Chooser> Sim<'_, C> {
    /// Agent: an elicitation of a random mode, scoped to session `s` (or, without one, to a
    /// request); the send is accepted exactly when the client advertised the mode.
    pub(super) fn agent_elicit_v2(&mut self, s: Option<String>) {
        let label = self.label();
        let url = self.c.chance(1, 2);
        let mut e = json!({"message": format!("r{label}"), "_meta": {"label": label}});
        match &s {
            Some(s) => e["sessionId"] = json!(s),
            None => e["requestId"] = json!(1),
        }
        let elicitation_id = format!("e{label}");
        if url {
            e["mode"] = json!("url");
            e["elicitationId"] = json!(elicitation_id);
            e["url"] = json!(format!("https://example.com/{label}"));
        } else {
            e["mode"] = json!("form");
            e["requestedSchema"] = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        }
        let request: v2::CreateElicitationRequest = typed(e);
        let mode = mode_of(&request);
        let advertised = advertises(self.agent.peer_caps.as_ref(), &["elicitation", mode]);
        let deadline = self.deadline();
        let before = self.agent.conn.bytes_queued();
        let r = self.agent.conn.send_request::<acp_proto::V2>(self.now, request, deadline).map_err(|r| r.error);
        self.agent.note_app_output(before);
        self.log(format!("agent elicitation v2 {mode} {s:?} r{label} -> {r:?}"));
        match r {
            Ok(id) => {
                assert!(advertised, "an elicitation of mode {mode} accepted without the client's capability");
                self.summary.v2.elicitations[usize::from(url)] += 1;
                self.v2.agent_elicitations.insert(id, (s.clone(), url.then_some(elicitation_id)));
                let out = Out { label, method: None, deadline, session: s, locally_cancelled: false };
                self.agent.outstanding.insert(id, out);
            }
            Err(SendError::NotSupportedByPeer { .. }) => {
                assert!(!advertised, "an elicitation of mode {mode} refused, the client advertised it");
                self.summary.v2.elicitations[2] += 1;
            }
            Err(SendError::Backpressure { .. } | SendError::TooManyPending { .. }) => {}
            Err(e) => panic!("agent: elicitation refused: {e}"),
        }
    }

    /// Agent: stops waiting for the elicitations of session `s` (its work was cancelled or
    /// it is being closed): `$/cancel_request` for each; their outcome is `Cancelled`.
    pub(super) fn agent_cancel_elicitations(&mut self, s: &str) {
        let ids: Vec<OutboundId> = self
            .v2
            .agent_elicitations
            .iter()
            .filter(|(_, (es, _))| es.as_deref() == Some(s))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let cancelled = self.agent.conn.cancel_request(self.now, id);
            self.log(format!("agent cancels elicitation {id} of {s} -> {cancelled}"));
            // Refused only when its outcome is already queued (the client's answer came in the
            // same input as the cancel): that outcome, the answer, follows.
            if cancelled && let Some(out) = self.agent.outstanding.get_mut(&id) {
                out.locally_cancelled = true;
            }
        }
    }

    /// Agent: the client's answer to an elicitation is the one it gave; an accepted URL
    /// elicitation is followed by `elicitation/complete`.
    pub(super) fn agent_elicitation_result(
        &mut self,
        id: OutboundId,
        label: u64,
        answer: &v2::CreateElicitationResponse,
        replies: &[Result<Option<String>, i64>],
    ) {
        let tag = match &answer.kind {
            CreateElicitationResponseKind::Accept(_) => "accept",
            CreateElicitationResponseKind::Decline => "decline",
            CreateElicitationResponseKind::Cancel => "cancel",
            other => panic!("unknown elicitation action {other:?}"),
        };
        assert!(
            replies.contains(&Ok(Some(tag.to_owned()))),
            "elicitation r{label} answered {tag}, replies {replies:?}"
        );
        let url_id = self.v2.agent_elicitations.get(&id).and_then(|(_, u)| u.clone());
        if let (Some(e), "accept") = (url_id, tag) {
            let n: v2::CompleteElicitationNotification = typed(json!({"elicitationId": e}));
            let r = self.agent.conn.send_notification::<acp_proto::V2>(self.now, n).map_err(|r| r.error);
            self.log(format!("agent elicitation/complete {e} -> {r:?}"));
            match r {
                Ok(()) | Err(SendError::Backpressure { .. } | SendError::Closed) => {}
                Err(e) => panic!("agent: elicitation/complete refused: {e}"),
            }
        }
    }

    /// Client: an elicitation arrived: only of a mode it advertised.
    pub(super) fn client_elicitation_received(&mut self, e: &v2::CreateElicitationRequest) {
        let mode = mode_of(e);
        let caps = Some(&self.v2.client_caps);
        assert!(advertises(caps, &["elicitation", mode]), "client: an elicitation of mode {mode} it did not advertise");
    }

    /// Client: answers an elicitation (accept, decline or cancel at random).
    pub(super) fn client_elicitation_answer(
        &mut self,
        e: &v2::CreateElicitationRequest,
    ) -> (Result<v2::Response, RpcError>, Result<Option<String>, i64>) {
        self.summary.v2.elicitations[3] += 1;
        let tag = *self.c.pick(&["accept", "decline", "cancel"]);
        if let (CreateElicitationRequestKind::Url(u), "accept") = (&e.kind, tag) {
            self.v2.client_url_accepted.insert(u.elicitation_id.to_string());
        }
        let answer: v2::CreateElicitationResponse = typed(json!({"action": tag}));
        (Ok(answer.into()), Ok(Some(tag.to_owned())))
    }

    /// Client: `elicitation/complete` arrived: it advertised URL elicitations, and it names one
    /// it accepted.
    pub(super) fn client_elicitation_complete(&mut self, c: &v2::CompleteElicitationNotification) {
        assert!(advertises(Some(&self.v2.client_caps), &["elicitation", "url"]), "elicitation/complete unadvertised");
        let id = c.elicitation_id.to_string();
        assert!(
            self.v2.client_url_accepted.remove(&id),
            "elicitation/complete of {id}, which the client did not accept"
        );
        self.summary.v2.elicitations[5] += 1;
    }
}
