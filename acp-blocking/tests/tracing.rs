//! The `tracing` feature: a span per connection, events for frames and dispatch, payloads only
//! when asked for. Run with `cargo test -p acp-blocking --features tracing`.
#![cfg(feature = "tracing")]

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use acp_blocking::{Agent, AgentOptions, ClientConnection, ClientOptions, PromptContext, RequestContext};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// One recorded event: its fields (the message under `message`) and its span's fields.
#[derive(Debug, Clone)]
struct Recorded {
    fields: BTreeMap<String, String>,
    span: Option<BTreeMap<String, String>>,
}

#[derive(Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

/// A span's name and fields, by id.
type Spans = HashMap<u64, (String, BTreeMap<String, String>)>;

/// A subscriber that records everything, with each event's current span.
#[derive(Default, Clone)]
struct Recorder {
    next: Arc<AtomicU64>,
    spans: Arc<Mutex<Spans>>,
    events: Arc<Mutex<Vec<Recorded>>>,
}

thread_local! {
    static STACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        self.spans.lock().unwrap().insert(id, (attrs.metadata().name().to_owned(), fields.0));
        Id::from_u64(id)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let span = STACK.with(|s| s.borrow().last().copied()).and_then(|id| {
            let spans = self.spans.lock().unwrap();
            spans.get(&id).map(|(name, fields)| {
                let mut fields = fields.clone();
                fields.insert("name".into(), name.clone());
                fields
            })
        });
        self.events.lock().unwrap().push(Recorded { fields: fields.0, span });
    }
    fn enter(&self, id: &Id) {
        STACK.with(|s| s.borrow_mut().push(id.into_u64()));
    }
    fn exit(&self, _: &Id) {
        STACK.with(|s| s.borrow_mut().pop());
    }
}

struct Echo;

impl Agent for Echo {
    fn initialize(&self, _: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        Ok(InitializeResponse::new(ProtocolVersion::V1))
    }
    fn new_session(&self, _: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
        Ok(NewSessionResponse::new("s"))
    }
    fn prompt(&self, _: PromptRequest, cx: &PromptContext) -> Result<PromptResponse, RpcError> {
        cx.send_text("secret-update-text")?;
        Ok(PromptResponse::new(StopReason::EndTurn))
    }
}

#[test]
fn spans_frames_and_dispatch_are_traced_with_payloads_only_when_asked() {
    let recorder = Recorder::default();
    tracing::subscriber::set_global_default(recorder.clone()).unwrap();

    let (agent_in, client_out) = std::io::pipe().unwrap();
    let (client_in, agent_out) = std::io::pipe().unwrap();
    let agent =
        std::thread::spawn(move || acp_blocking::serve_with(Echo, agent_in, agent_out, AgentOptions::default()));
    let mut options = ClientOptions::default();
    options.trace_payloads = true;
    let conn = ClientConnection::connect((), client_in, client_out, options).unwrap();
    conn.initialize(InitializeRequest::new(ProtocolVersion::V1)).unwrap();
    let session = conn.new_session(NewSessionRequest::new("/", vec![])).unwrap().session_id;
    let stop = conn.prompt_with(PromptRequest::new(session, vec!["hi".into()]), |_| {}).unwrap();
    assert_eq!(stop, StopReason::EndTurn);
    conn.close().unwrap();
    agent.join().unwrap().unwrap();

    let events = recorder.events.lock().unwrap().clone();
    let of = |side: &str, message: &str| -> Vec<Recorded> {
        events
            .iter()
            .filter(|e| e.fields.get("message").is_some_and(|m| m == message))
            .filter(|e| e.span.as_ref().is_some_and(|s| s["name"] == "acp_connection" && s["side"] == side))
            .cloned()
            .collect()
    };

    // The agent (payloads off): frames with their length only.
    let agent_out = of("Agent", "frame out");
    assert!(agent_out.len() >= 4, "initialize, session/new, an update, the prompt's response: {agent_out:?}");
    assert!(agent_out.iter().all(|e| e.fields.contains_key("len") && !e.fields.contains_key("payload")));
    assert!(!of("Agent", "frame in").is_empty());
    let dispatched: Vec<String> = of("Agent", "dispatch request").iter().map(|e| e.fields["method"].clone()).collect();
    assert_eq!(dispatched, ["initialize", "session/new", "session/prompt"]);
    assert!(of("Agent", "dispatch request").iter().all(|e| !e.fields.contains_key("params")));
    assert_eq!(of("Agent", "handshake completed").len(), 1);
    assert_eq!(of("Agent", "connection closed").len(), 1);

    // The client (payloads on): the update's text is in its frame-in and dispatch events.
    let client_in = of("Client", "frame in");
    assert!(client_in.iter().any(|e| e.fields.get("payload").is_some_and(|p| p.contains("secret-update-text"))));
    let notifications = of("Client", "dispatch notification");
    assert!(notifications.iter().any(|e| e.fields.get("params").is_some_and(|p| p.contains("secret-update-text"))));
    assert_eq!(of("Client", "dispatch outcome").len(), 3, "initialize, session/new, session/prompt");

    // Without payloads, the update's text appears nowhere on the agent's side.
    let agent_text = events
        .iter()
        .filter(|e| e.span.as_ref().is_some_and(|s| s["side"] == "Agent"))
        .any(|e| e.fields.values().any(|v| v.contains("secret-update-text")));
    assert!(!agent_text);
}
