//! The v2 reference agent's scripted turn (see the [module docs](super)): the v1 turn's
//! content (`script`) sent as v2 upserts, between `running` and `idle`.

use std::path::Path;
use std::time::Duration;

use acp_proto::RpcError;
use acp_proto::v2::{self, IdleStopReason, SessionId};
use acp_tokio::Error;
use acp_tokio::v2::AgentContext;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::super::{ALLOW_ONCE, first_absolute_path, is_slow, script};

/// Why the script stopped before its end.
enum Halt {
    /// `session/cancel` or `session/close`.
    Stopped,
    /// The connection refused an update or the ask (it is closing).
    Failed(Error),
}

impl From<Error> for Halt {
    fn from(e: Error) -> Halt {
        Halt::Failed(e)
    }
}

/// One running turn.
pub(super) struct Turn {
    pub(super) session: SessionId,
    pub(super) text: String,
    pub(super) system: Option<String>,
    pub(super) n: u64,
    pub(super) stop: watch::Receiver<bool>,
    pub(super) cx: AgentContext,
    /// The prompts that join this turn: their text and their N.
    pub(super) joined: mpsc::Receiver<(String, u64)>,
    /// Takes the turn out of the agent's running turns (before the last joined prompts are
    /// taken, so that none is left behind).
    pub(super) leave: Option<Box<dyn FnOnce() + Send + Sync>>,
}

/// What the turn did with its tool call.
#[derive(Clone, Copy, PartialEq)]
enum Call {
    NotSent,
    Open,
    Final,
}

impl Turn {
    /// Runs the turn to its `idle`; returns the session, how the turn stopped and the error
    /// that stopped it, if one did.
    pub(super) async fn run(mut self, slow: Duration) -> (SessionId, IdleStopReason, Option<Error>) {
        // The turn's updates follow the prompt's acknowledgement on the wire.
        self.cx.answered().await;
        let mut call = Call::NotSent;
        let (stop, error) = match self.script(slow, &mut call).await {
            Ok(stop) if !self.stopped() => (stop, None),
            Ok(_) | Err(Halt::Stopped) => (IdleStopReason::Cancelled, None),
            Err(Halt::Failed(_)) if self.stopped() => (IdleStopReason::Cancelled, None),
            Err(Halt::Failed(e)) => (IdleStopReason::Error, Some(e)),
        };
        if call == Call::Open && stop == IdleStopReason::Cancelled {
            let _ = self.send(self.tool(json!({ "status": "cancelled" }))).await;
        }
        // What joined after the wait is taken before idle: nothing is left behind.
        if let Some(leave) = self.leave.take() {
            leave();
        }
        self.joined.close();
        while let Ok(joined) = self.joined.try_recv() {
            let _ = self.take_joined(joined).await;
        }
        let _ = self.cx.send_idle(&self.session, stop.clone()).await;
        (self.session, stop, error)
    }

    /// Step 3: waits `slow` unless stopped, taking each prompt that joins meanwhile.
    async fn wait(&mut self, slow: Duration) -> Result<(), Halt> {
        let deadline = tokio::time::Instant::now() + slow;
        let mut stop = self.stop.clone();
        loop {
            let stopped = async {
                // The guard `wait_for` gives back is not `Send`: dropped here.
                let _ = stop.wait_for(|s| *s).await;
            };
            tokio::select! {
                () = stopped => return Ok(()),
                () = tokio::time::sleep_until(deadline) => return Ok(()),
                Some(joined) = self.joined.recv() => self.take_joined(joined).await?,
            }
        }
    }

    /// A prompt that joined the turn: where it went in the history, and the turn's word on it.
    async fn take_joined(&self, (text, n): (String, u64)) -> Result<(), Halt> {
        let user = json!({
            "sessionUpdate": "user_message", "messageId": format!("user-{n}"),
            "content": [{ "type": "text", "text": text }],
        });
        self.send(user).await?;
        self.send(self.message(&format!("\nsteered: {text}"))).await
    }

    fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Fails with [`Halt::Stopped`] once the turn was asked to stop.
    fn check(&self) -> Result<(), Halt> {
        if self.stopped() { Err(Halt::Stopped) } else { Ok(()) }
    }

    async fn send(&self, update: Value) -> Result<(), Halt> {
        let update: v2::SessionUpdate = serde_json::from_value(update)
            .map_err(|e| Halt::Failed(Error::Rpc(RpcError::internal_error(e.to_string()))))?;
        Ok(self.cx.send_update(&self.session, update).await?)
    }

    fn chunk(&self, kind: &str, id: &str, text: &str) -> Value {
        json!({ "sessionUpdate": kind, "messageId": id, "content": { "type": "text", "text": text } })
    }

    fn message(&self, text: &str) -> Value {
        self.chunk("agent_message_chunk", &format!("agent-{}", self.n), text)
    }

    /// A `tool_call_update` of this turn's tool call with `fields`.
    fn tool(&self, mut fields: Value) -> Value {
        fields["sessionUpdate"] = json!("tool_call_update");
        fields["toolCallId"] = json!(format!("call-{}", self.n));
        fields
    }

    fn plan(&self, path: Option<&str>, statuses: [&str; 2]) -> Value {
        let entries: Vec<Value> = script::plan(path)
            .into_iter()
            .zip(statuses)
            .map(|(step, status)| json!({ "content": step.content, "priority": step.priority, "status": status }))
            .collect();
        json!({
            "sessionUpdate": "plan_update",
            "plan": { "type": "items", "planId": format!("plan-{}", self.n), "entries": entries },
        })
    }

    async fn script(&mut self, slow: Duration, call: &mut Call) -> Result<IdleStopReason, Halt> {
        let text = self.text.clone();
        let path = first_absolute_path(&text);
        // Where the prompt went in the session's history: the message the acknowledgement named.
        let user = json!({
            "sessionUpdate": "user_message", "messageId": format!("user-{}", self.n),
            "content": [{ "type": "text", "text": text }],
        });
        self.send(user).await?;
        self.send(json!({ "sessionUpdate": "state_update", "state": "running" })).await?;
        self.send(self.message(&script::echo(&text))).await?;
        if let Some(system) = &self.system {
            self.send(self.message(&script::system_prompt_note(system))).await?;
        }
        if is_slow(&text) {
            self.wait(slow).await?;
        }
        self.check()?;
        let thought = format!("thought-{}", self.n);
        self.send(self.chunk("agent_thought_chunk", &thought, &script::thought(path, false))).await?;
        self.send(self.plan(path, ["in_progress", "pending"])).await?;

        let title = script::tool_title(path);
        let locations: Vec<Value> = path.map(|p| json!({ "path": p })).into_iter().collect();
        let opened = json!({
            "title": title, "kind": "read", "status": "pending", "locations": locations,
            "rawInput": script::raw_input(path, &text),
        });
        self.check()?;
        self.send(self.tool(opened)).await?;
        *call = Call::Open;
        if !self.allowed(&title).await? {
            self.send(self.tool(json!({ "status": "failed", "content": [text_content(script::REJECTED)] }))).await?;
            *call = Call::Final;
            return Ok(IdleStopReason::EndTurn);
        }
        self.check()?;
        self.send(self.tool(json!({ "status": "in_progress" }))).await?;
        let note = match path {
            None => script::NO_PATH.to_owned(),
            Some(p) if !Path::new(p).exists() => script::missing(p),
            Some(p) => format!("Not read: ACP v2 has no client file system (fs/*), so {p} stays unread."),
        };
        self.check()?;
        self.send(self.tool(json!({ "status": "completed", "content": [text_content(&note)] }))).await?;
        *call = Call::Final;
        self.send(self.plan(path, ["completed", "completed"])).await?;
        self.send(self.message(script::DONE)).await?;
        Ok(IdleStopReason::EndTurn)
    }

    /// Asks permission for the tool call: `Ok(true)` allowed, `Ok(false)` rejected,
    /// [`Halt::Stopped`] cancelled.
    async fn allowed(&self, title: &str) -> Result<bool, Halt> {
        let ask = json!({
            "sessionId": self.session, "title": title,
            "subject": { "type": "tool_call", "toolCall": { "toolCallId": format!("call-{}", self.n) } },
            "options": script::permission_options(),
        });
        let ask: v2::RequestPermissionRequest = serde_json::from_value(ask)
            .map_err(|e| Halt::Failed(Error::Rpc(RpcError::internal_error(e.to_string()))))?;
        match self.cx.request_permission(ask).await {
            Ok(answer) => match answer.outcome {
                v2::RequestPermissionOutcome::Selected(s) => Ok(s.option_id.as_str() == ALLOW_ONCE),
                _ => Err(Halt::Stopped),
            },
            Err(_) if self.stopped() => Err(Halt::Stopped),
            // A refused or failed ask counts as cancelled, as in the v1 agent.
            Err(_) => Err(Halt::Stopped),
        }
    }
}

/// A `ToolCallContent` of text.
fn text_content(text: &str) -> Value {
    json!({ "type": "content", "content": { "type": "text", "text": text } })
}
