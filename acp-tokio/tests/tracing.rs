//! The `tracing` feature: a span per connection, an event per frame in and out (payloads only
//! when asked for), events for dispatch.
#![cfg(feature = "tracing")]

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use acp_tokio::{AgentOptions, ClientConnection, ClientOptions};
use common::{EchoAgent, handshake, scenarios};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// One event or span: its name (or message) and its fields.
#[derive(Debug, Clone)]
struct Recorded {
    name: String,
    fields: BTreeMap<String, String>,
}

#[derive(Default)]
struct Collector {
    spans: Mutex<Vec<Recorded>>,
    events: Mutex<Vec<Recorded>>,
    next: AtomicU64,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Collector {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = BTreeMap::new();
        span.record(&mut Fields(&mut fields));
        self.spans.lock().unwrap().push(Recorded { name: span.metadata().name().to_owned(), fields });
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let name = fields.remove("message").unwrap_or_default();
        self.events.lock().unwrap().push(Recorded { name, fields });
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// Runs a handshake and a short turn with both sides traced; returns what was recorded.
fn traced_run(payloads: bool) -> Arc<Collector> {
    let collector = Arc::new(Collector::default());
    tracing::subscriber::with_default(collector.clone(), || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let (client_io, agent_io) = tokio::io::duplex(64 * 1024);
            let (reader, writer) = tokio::io::split(agent_io);
            let mut agent_options = AgentOptions::default();
            agent_options.trace_payloads = payloads;
            tokio::spawn(acp_tokio::serve(EchoAgent::default(), reader, writer, agent_options));
            let (reader, writer) = tokio::io::split(client_io);
            let mut client_options = ClientOptions::default();
            client_options.trace_payloads = payloads;
            let conn = ClientConnection::connect((), reader, writer, client_options);
            let session = handshake(&conn).await;
            scenarios::run_turn(&conn, &session, "storm 3").await;
            conn.close().await.expect("close");
        });
    });
    collector
}

fn frames(collector: &Collector, direction: &str) -> Vec<Recorded> {
    let events = collector.events.lock().unwrap();
    // acp-runtime's vocabulary: `frame in` / `frame out`.
    let name = format!("frame {direction}");
    events.iter().filter(|e| e.name == name).cloned().collect()
}

#[test]
fn spans_frames_and_dispatch_without_payloads() {
    let collector = traced_run(false);
    let spans = collector.spans.lock().unwrap().clone();
    let sides: Vec<&str> =
        spans.iter().filter(|s| s.name == "acp_connection").map(|s| s.fields["side"].as_str()).collect();
    assert_eq!(sides.len(), 2, "{spans:?}");
    assert!(sides.contains(&"Agent") && sides.contains(&"Client"), "{sides:?}");

    // Client out: initialize, session/new, session/prompt; agent out: 2 answers, 3 updates, 1 answer;
    // and each side reads what the other wrote.
    let (out, inbound) = (frames(&collector, "out"), frames(&collector, "in"));
    assert_eq!((out.len(), inbound.len()), (9, 9), "{out:?}");
    assert!(out.iter().chain(&inbound).all(|f| f.fields.contains_key("len") && !f.fields.contains_key("payload")));

    let events = collector.events.lock().unwrap();
    let dispatched: Vec<&str> =
        events.iter().filter(|e| e.name == "dispatch request").map(|e| e.fields["method"].as_str()).collect();
    assert_eq!(dispatched, ["initialize", "session/new", "session/prompt"]);
    assert_eq!(events.iter().filter(|e| e.name == "dispatch notification").count(), 3, "the updates");
    assert_eq!(events.iter().filter(|e| e.name == "connection closed").count(), 2, "both sides");
}

#[test]
fn payloads_when_asked_for() {
    let collector = traced_run(true);
    let out = frames(&collector, "out");
    assert!(out.iter().all(|f| f.fields.get("payload").is_some_and(|p| p.len().to_string() == f.fields["len"])));
    assert!(out[0].fields["payload"].contains(r#""method":"initialize""#), "{:?}", out[0]);
    let inbound = frames(&collector, "in");
    assert!(inbound.iter().any(|f| f.fields["payload"].contains(r#""sessionUpdate":"agent_message_chunk""#)));
}
