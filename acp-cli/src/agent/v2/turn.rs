//! The v2 reference agent's scripted turn (see the [module docs](super)): the v1 turn's
//! content (`script`) sent as v2 upserts, between `running` and `idle`.

use std::path::Path;
use std::time::Duration;

use acp_proto::v2::{
    self, ContentBlock, ContentChunk, IdleStopReason, PlanEntry, PlanEntryStatus, SessionId, SessionUpdate,
    TextContent, ToolCallStatus, ToolCallUpdate,
};
use acp_tokio::Error;
use acp_tokio::v2::AgentContext;
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
            let _ = self.send(self.tool(ToolCallStatus::Cancelled, None)).await;
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
        self.send(user_message(n, &text)).await?;
        self.send(self.message(&format!("\nsteered: {text}"))).await
    }

    fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    /// Fails with [`Halt::Stopped`] once the turn was asked to stop.
    fn check(&self) -> Result<(), Halt> {
        if self.stopped() { Err(Halt::Stopped) } else { Ok(()) }
    }

    async fn send(&self, update: SessionUpdate) -> Result<(), Halt> {
        Ok(self.cx.send_update(&self.session, update).await?)
    }

    /// A chunk of this turn's message `agent-N`.
    fn message(&self, text: &str) -> SessionUpdate {
        SessionUpdate::AgentMessageChunk(ContentChunk::new(format!("agent-{}", self.n), text_block(text)))
    }

    /// A `tool_call_update` of this turn's tool call: its new status, and its content if any.
    fn tool(&self, status: ToolCallStatus, content: Option<&str>) -> SessionUpdate {
        SessionUpdate::ToolCallUpdate(ToolCallUpdate {
            status: Some(status),
            content: content.map(|text| vec![v2::ToolCallContent::Content(v2::Content::new(text_block(text)))]),
            ..self.call()
        })
    }

    /// This turn's tool call, with nothing set but its id.
    fn call(&self) -> ToolCallUpdate {
        ToolCallUpdate::new(format!("call-{}", self.n))
    }

    fn plan(&self, path: Option<&str>, statuses: [PlanEntryStatus; 2]) -> SessionUpdate {
        let entries: Vec<PlanEntry> = script::plan(path)
            .into_iter()
            .zip(statuses)
            .map(|(step, status)| PlanEntry::new(step.content, step.priority, status))
            .collect();
        let items = v2::PlanItems::new(format!("plan-{}", self.n), entries);
        SessionUpdate::PlanUpdate(v2::PlanUpdate::new(v2::PlanUpdateContent::Items(items)))
    }

    async fn script(&mut self, slow: Duration, call: &mut Call) -> Result<IdleStopReason, Halt> {
        let text = self.text.clone();
        let path = first_absolute_path(&text);
        // Where the prompt went in the session's history: the message the acknowledgement named.
        self.send(user_message(self.n, &text)).await?;
        let running = v2::StateUpdate::Running(v2::RunningStateUpdate::default());
        self.send(SessionUpdate::StateUpdate(running)).await?;
        self.send(self.message(&script::echo(&text))).await?;
        if let Some(system) = &self.system {
            self.send(self.message(&script::system_prompt_note(system))).await?;
        }
        if is_slow(&text) {
            self.wait(slow).await?;
        }
        self.check()?;
        let thought = ContentChunk::new(format!("thought-{}", self.n), text_block(&script::thought(path, false)));
        self.send(SessionUpdate::AgentThoughtChunk(thought)).await?;
        self.send(self.plan(path, [PlanEntryStatus::InProgress, PlanEntryStatus::Pending])).await?;

        let title = script::tool_title(path);
        let opened = ToolCallUpdate {
            title: Some(title.clone()),
            kind: Some(v2::ToolKind::Read),
            status: Some(ToolCallStatus::Pending),
            locations: Some(path.map(v2::ToolCallLocation::new).into_iter().collect()),
            raw_input: Some(script::raw_input(path, &text)),
            ..self.call()
        };
        self.check()?;
        self.send(SessionUpdate::ToolCallUpdate(opened)).await?;
        *call = Call::Open;
        if !self.allowed(&title).await? {
            self.send(self.tool(ToolCallStatus::Failed, Some(script::REJECTED))).await?;
            *call = Call::Final;
            return Ok(IdleStopReason::EndTurn);
        }
        self.check()?;
        self.send(self.tool(ToolCallStatus::InProgress, None)).await?;
        let note = match path {
            None => script::NO_PATH.to_owned(),
            Some(p) if !Path::new(p).exists() => script::missing(p),
            Some(p) => format!("Not read: ACP v2 has no client file system (fs/*), so {p} stays unread."),
        };
        self.check()?;
        self.send(self.tool(ToolCallStatus::Completed, Some(&note))).await?;
        *call = Call::Final;
        self.send(self.plan(path, [PlanEntryStatus::Completed, PlanEntryStatus::Completed])).await?;
        self.send(self.message(script::DONE)).await?;
        Ok(IdleStopReason::EndTurn)
    }

    /// Asks permission for the tool call: `Ok(true)` allowed, `Ok(false)` rejected,
    /// [`Halt::Stopped`] cancelled.
    async fn allowed(&self, title: &str) -> Result<bool, Halt> {
        let subject = v2::RequestPermissionSubject::ToolCall(v2::ToolCallPermissionSubject::new(self.call()));
        let ask = v2::RequestPermissionRequest {
            subject: Some(subject),
            ..v2::RequestPermissionRequest::new(self.session.clone(), title, script::permission_options())
        };
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

/// A text block.
fn text_block(text: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

/// The `user_message` `user-N` of a prompt: where it went in the session's history.
fn user_message(n: u64, text: &str) -> SessionUpdate {
    SessionUpdate::UserMessage(v2::UserMessage {
        content: Some(vec![text_block(text)]),
        ..v2::UserMessage::new(format!("user-{n}"))
    })
}
