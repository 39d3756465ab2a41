//! JSON-RPC batch arrays on a v2 connection (feature `unstable_protocol_v2`; the v2 docs,
//! `transports.mdx`, "JSON-RPC Batch Messages").
//!
//! A v2 peer may send one line holding an array of requests and notifications (and, as
//! JSON-RPC allows, of responses to our requests). The machine takes it apart; the application
//! sees the same [`Event::Request`](super::Event::Request) and
//! [`Event::Notification`](super::Event::Notification) events as for single frames and
//! answers each request with [`Connection::respond`] as usual: it never needs to know that
//! a request came in a batch.
//!
//! # Rules
//!
//! 1. **v2 only.** Arrays are taken apart once the connection speaks v2 (after the v2
//!    handshake). On a v1 connection, and before the handshake, an array is what it always was:
//!    one `-32600` with `id: null`, nothing dispatched (the docs also ask peers not to batch
//!    `initialize`).
//! 2. **Each entry is a message.** Entries go through exactly the pipeline of a single frame
//!    (the inbound checks of the [connection module](super), `$/cancel_request`, the v2 turn
//!    rules), in array order.
//! 3. **One answer array.** The responses to the batch's requests (the application's answers,
//!    the machine's refusals of entries, its own answers after a cancellation) are held and
//!    written as one array frame, in the order they were produced, once every request of the
//!    batch has its answer. Requests of other frames are answered as usual meanwhile.
//! 4. **Nothing for nothing.** Notifications are never answered; a batch that leaves no
//!    response (only notifications, only responses, duplicates dropped) writes nothing at all.
//! 5. **Frame errors stay single.** An empty array gets one `-32600` (`id: null`), a line that
//!    is not JSON one `-32700` (`id: null`), never an array.
//! 6. **Invalid entries** get their own `-32600` inside the array (`id: null`, or the entry's
//!    id when it was a valid one, as for a single frame); they do not fail the batch.
//! 7. **Bounded entries.** A batch of more than [`Config::max_batch_entries`] entries is
//!    refused as a whole, unread: one `-32600` with `id: null` and
//!    `data: {reason: "batch has too many entries", entries, limit}`.
//! 8. **Bounded held answers.** Answers held for unfinished batches count against
//!    [`Config::outbound_budget`]: once they reach it, input pauses while this side awaits no
//!    answer from the peer (only the application's answers release them); while it awaits
//!    one, input goes on and each new batch is refused as a whole, unread: one `-32603` with
//!    `id: null` and `data: {reason: "output queue full", limit}`. They do not block
//!    [`Connection::can_send`]: an adapter waits for it before it answers, and only answers
//!    release held bytes.
//! 9. **Close drops a partial batch.** When the connection closes with a batch partly
//!    answered, its held answers are never written (its requests are reported
//!    [`CancelReason::ConnectionClosed`](super::CancelReason::ConnectionClosed) like any other).
//! 10. **Response batches** (an array of responses to our requests) are accepted: each is
//!     routed by its id as a single response would be.
//! 11. **The machine never sends a batch** (the docs say a peer *may*): every frame it writes
//!     is a single message, except the answer arrays of rule 3.
//!
//! ```
//! use acp_proto::role::Agent;
//! use acp_proto::{Config, Connection, Event, Instant, V2, v2};
//!
//! let mut agent: Connection<Agent, V2> = Connection::new(Config::default(), Instant::ZERO);
//! # let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"c","version":"1"},"capabilities":{}}}"#;
//! # let _ = agent.handle_input(Instant::ZERO, init);
//! # let _ = agent.handle_input(Instant::ZERO, b"\n");
//! # let Some(Event::Request(request)) = agent.poll_event() else { panic!() };
//! # let v2::Call::Client(v2::ClientCall::Initialize(_, responder)) = request.into_call() else { panic!() };
//! # let result: v2::InitializeResponse = serde_json::from_str(
//! #     r#"{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{}}"#,
//! # ).unwrap();
//! # agent.respond(Instant::ZERO, responder.answer(Ok(result))).unwrap();
//! # let _ = agent.poll_transmit(&mut Vec::new());
//! # while agent.poll_event().is_some() {}
//! // ... the v2 handshake is done. One line, two calls: an extension request and a method
//! // that does not exist.
//! let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"_x/echo","params":{}},{"jsonrpc":"2.0","id":2,"method":"nope"}]"#;
//! let _ = agent.handle_input(Instant::ZERO, batch);
//! let _ = agent.handle_input(Instant::ZERO, b"\n");
//! let Some(Event::Request(request)) = agent.poll_event() else { panic!("a request") };
//! let v2::Call::Client(v2::ClientCall::Ext(_, responder)) = request.into_call() else {
//!     panic!("the extension request")
//! };
//! let mut out = Vec::new();
//! assert_eq!(agent.poll_transmit(&mut out), 0, "the refusal of id 2 waits for its sibling");
//! let echo = v2::ExtResponse(serde_json::json!({}));
//! agent.respond(Instant::ZERO, responder.answer(Ok(echo))).unwrap();
//! let _ = agent.poll_transmit(&mut out);
//! let answers: serde_json::Value = serde_json::from_slice(&out).unwrap();
//! assert_eq!(answers[0]["error"]["code"], -32601);
//! assert_eq!(answers[1]["id"], 1);
//! ```

#[cfg(doc)]
use super::Connection;
use std::collections::BTreeMap;

use serde::de::{IgnoredAny, SeqAccess, Visitor};
use serde_json::json;
use serde_json::value::RawValue;

use super::AnyConnection;
#[cfg(doc)]
use super::Config;
use crate::error::RpcError;
use crate::jsonrpc::{self, Incoming, RequestId};

/// The batches whose answers are being collected.
#[derive(Debug, Default)]
pub(super) struct Batches {
    /// Open batches by sequence number.
    open: BTreeMap<u64, Open>,
    /// The batch of each request in flight that came in one, by its handle.
    members: BTreeMap<u64, u64>,
    /// The request being answered right now, when it came in a batch: its wire id and batch.
    answering: Option<(RequestId, u64)>,
    /// The entry being read: its batch, and the id its own immediate answer would carry.
    current: Option<(u64, Option<RequestId>)>,
    next: u64,
    /// Bytes held in all open batches.
    held: usize,
}

/// One batch whose answers are being collected.
#[derive(Debug, Default)]
struct Open {
    /// Requests of the batch still in flight.
    pending: usize,
    /// The answers so far, comma-separated, without the brackets.
    body: Vec<u8>,
    /// Bytes of `body` the machine wrote itself (refusals of entries).
    machine: usize,
    /// Whether its entries are still being read (it cannot be complete before).
    reading: bool,
}

impl Batches {
    /// Bytes of answers held for unfinished batches.
    pub(super) fn held(&self) -> usize {
        self.held
    }

    /// Open batches.
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }
}

/// A batch line taken apart.
enum Split<'a> {
    Entries(Vec<&'a RawValue>),
    Empty,
    TooMany {
        entries: usize,
    },
    /// Not a JSON array: the general path classifies it (`-32700` for broken JSON).
    NotArray,
}

/// Whether `frame` is (or tries to be) a JSON array: its first non-blank byte is `[`.
pub(super) fn is_array(frame: &[u8]) -> bool {
    frame.iter().find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n')) == Some(&b'[')
}

/// Splits an array line into its raw entries, keeping at most `limit` (the rest are only
/// counted).
fn split(frame: &[u8], limit: usize) -> Split<'_> {
    let Ok(text) = std::str::from_utf8(frame) else { return Split::NotArray };
    let mut de = serde_json::Deserializer::from_str(text);
    let Ok((entries, count)) = serde::Deserializer::deserialize_seq(&mut de, EntriesVisitor { limit }) else {
        return Split::NotArray;
    };
    if de.end().is_err() {
        return Split::NotArray;
    }
    match count {
        0 => Split::Empty,
        n if n > limit => Split::TooMany { entries: n },
        _ => Split::Entries(entries),
    }
}

struct EntriesVisitor {
    limit: usize,
}

impl<'de> Visitor<'de> for EntriesVisitor {
    type Value = (Vec<&'de RawValue>, usize);

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC batch array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::new();
        let mut count = 0;
        while count < self.limit {
            match seq.next_element::<&'de RawValue>()? {
                Some(entry) => entries.push(entry),
                None => return Ok((entries, count)),
            }
            count += 1;
        }
        while seq.next_element::<IgnoredAny>()?.is_some() {
            count += 1;
        }
        Ok((entries, count))
    }
}

impl AnyConnection {
    /// A batch line on a v2 connection (rules 2 to 8).
    pub(super) fn on_batch(&mut self, frame: &[u8]) {
        let limit = self.config.max_batch_entries;
        let entries = match split(frame, limit) {
            Split::NotArray => return self.on_frame_general(frame),
            Split::Entries(entries) => entries,
            Split::Empty => {
                self.stats.malformed_frames += 1;
                return self.reply_error(&RequestId::Null, &RpcError::invalid_request("empty batch"));
            }
            Split::TooMany { entries } => {
                self.stats.malformed_frames += 1;
                let reason = "batch has too many entries";
                let error = RpcError::invalid_request(reason)
                    .with_data(json!({"reason": reason, "entries": entries, "limit": limit}));
                return self.reply_error(&RequestId::Null, &error);
            }
        };
        let budget = self.config.outbound_budget;
        if self.batches.held >= budget {
            self.stats.requests_shed += 1;
            let error = RpcError::internal_error("output queue full")
                .with_data(json!({"reason": "output queue full", "limit": budget}));
            return self.reply_error(&RequestId::Null, &error);
        }
        self.stats.batches += 1;
        let batch = self.batches.next;
        self.batches.next += 1;
        self.batches.open.insert(batch, Open { reading: true, ..Open::default() });
        for entry in entries {
            self.on_batch_entry(batch, entry.get().as_bytes());
        }
        self.batches.current = None;
        // The connection may have closed along the way (a response entry can close it).
        if let Some(open) = self.batches.open.get_mut(&batch) {
            open.reading = false;
            if open.pending == 0 {
                self.flush_batch(batch);
            }
        }
    }

    /// One entry of `batch`, through the pipeline of a single frame.
    fn on_batch_entry(&mut self, batch: u64, entry: &[u8]) {
        let incoming = jsonrpc::parse(entry);
        let reply_id = match &incoming {
            Incoming::Request { id, .. } | Incoming::Invalid { id, .. } => Some(id.clone()),
            _ => None,
        };
        let first_key = self.next_inbound;
        self.batches.current = Some((batch, reply_id.clone()));
        self.on_incoming(incoming, entry);
        // Dispatched (or deferred) now: its answer belongs to this batch.
        if let Some(id) = reply_id
            && let Some(&key) = self.by_wire.get(&id)
            && key >= first_key
            && let Some(open) = self.batches.open.get_mut(&batch)
        {
            open.pending += 1;
            self.batches.members.insert(key, batch);
        }
    }

    /// Inbound request `key` (wire id `wire_id`) is being answered: when it came in a batch,
    /// the response about to be queued goes there.
    pub(super) fn batch_answering(&mut self, key: u64, wire_id: &RequestId) {
        if let Some(batch) = self.batches.members.remove(&key) {
            self.batches.answering = Some((wire_id.clone(), batch));
        }
    }

    /// Moves the response frame just queued at `out[start..]` into its batch, when it answers
    /// an entry of one; returns whether it did.
    pub(super) fn route_to_batch(&mut self, id: &RequestId, start: usize) -> bool {
        let (batch, machine) = match (self.batches.answering.take(), &self.batches.current) {
            (Some((wire, batch)), _) => {
                debug_assert_eq!(&wire, id, "a batch member's answer follows its removal");
                (batch, false)
            }
            (None, Some((batch, Some(current)))) if current == id => (*batch, true),
            _ => return false,
        };
        let Some(open) = self.batches.open.get_mut(&batch) else { return false };
        // The frame without its `\n`.
        let frame = &self.out[start..self.out.len() - 1];
        let before = open.body.len();
        if before > 0 {
            open.body.push(b',');
        }
        open.body.extend_from_slice(frame);
        let added = open.body.len() - before;
        self.out.truncate(start);
        self.batches.held += added;
        if machine {
            open.machine += added;
        } else {
            open.pending -= 1;
            if open.pending == 0 && !open.reading {
                self.flush_batch(batch);
            }
        }
        true
    }

    /// Writes a complete batch's answers as one array frame (nothing when it has none).
    fn flush_batch(&mut self, batch: u64) {
        let Some(open) = self.batches.open.remove(&batch) else { return };
        self.batches.held -= open.body.len();
        if open.body.is_empty() {
            return;
        }
        let start = self.out.len();
        self.out.push(b'[');
        self.out.extend_from_slice(&open.body);
        self.out.extend_from_slice(b"]\n");
        self.stats.frames_out += 1;
        // The machine's own refusals count toward the input bound, as single ones do.
        let written = self.out.len() - start;
        self.machine_out += if open.machine == open.body.len() { written } else { open.machine };
    }

    /// Whether held batch answers fill the output budget while this side awaits nothing from
    /// the peer (rule 8): input pauses until the application answers.
    pub(super) fn batches_stop_input(&self) -> bool {
        self.batches.held >= self.config.outbound_budget && self.outbound.is_empty()
    }

    /// Close: partly answered batches are dropped (rule 9).
    pub(super) fn drop_batches(&mut self) {
        self.batches = Batches::default();
    }
}
