//! The fuzz target `resume`: the control messages of resumable remote streams
//! (`acp_proto::resume`) on arbitrary text.

use serde_json::Value;

use acp_proto::jsonrpc::RequestId;
use acp_proto::resume::{self, CURSOR_KEY, MAX_TURNS, ResumeAnswer, ResumeRequest};

/// Fuzz target `resume`: every reader and the cursor stamp of `acp_proto::resume` on one
/// frame. Checks: no panic; a stamped message is the same message with its cursor added (a
/// batch: each object of it) and reads back that cursor; what is not stamped comes back
/// unchanged; a resume request, an answer and a turn-state map read back whole from what
/// their writers make of them; a peer's map yields at most `MAX_TURNS` turns.
pub fn resume(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let cursor = data.len() as u64;
    stamp(text, cursor);

    if let Some(request) = ResumeRequest::read(text) {
        assert_eq!(ResumeRequest::read(&request.to_frame()), Some(request));
    }
    let turns = resume::read_turn_states(text);
    assert!(turns.len() <= MAX_TURNS);
    assert_eq!(resume::read_turn_states(&resume::turn_state_json(&turns)), turns);
    if let Some(advertised) = resume::advertise(text, 3, 4) {
        let answer: Value = serde_json::from_str(&advertised).expect("an advertised answer is JSON");
        let resumable = answer.pointer("/result/agentCapabilities/_meta/acp~1transport/resumable");
        assert_eq!(resumable, Some(&serde_json::json!({"retentionMessages": 3, "retentionSeconds": 4})));
    }
    let id = RequestId::from("acp/resume");
    if let Ok(answer) = ResumeAnswer::read(text, &id) {
        assert!(answer.turns.len() <= MAX_TURNS);
        assert_eq!(ResumeAnswer::read(&answer.to_frame(&id), &id), Ok(answer));
    }
}

/// `with_cursor` against the same stamp done on the parsed message.
fn stamp(text: &str, cursor: u64) {
    let stamped = resume::with_cursor(text, cursor);
    if stamped == text {
        return;
    }
    assert!(serde_json::from_str::<&serde_json::value::RawValue>(&stamped).is_ok(), "a stamped frame is JSON");
    // JSON that a `Value` cannot hold (a number beyond f64, as 1e400) is stamped too, in its
    // text; there is nothing to compare it with.
    let Ok(mut expected) = serde_json::from_str::<Value>(text) else { return };
    let after: Value = serde_json::from_str(&stamped).expect("a stamped message is JSON");
    let put = |message: &mut Value| {
        if let Some(Value::Object(meta)) = message.get_mut("_meta") {
            meta.insert(CURSOR_KEY.to_owned(), Value::String(cursor.to_string()));
        } else if let Value::Object(envelope) = message
            && !envelope.contains_key("_meta")
        {
            envelope.insert("_meta".to_owned(), serde_json::json!({ CURSOR_KEY: cursor.to_string() }));
        }
    };
    match &mut expected {
        Value::Array(batch) => batch.iter_mut().for_each(put),
        message => put(message),
    }
    assert_eq!(after, expected, "the stamp changed more than the cursor");
    if resume::cursor_of(&stamped).is_some() {
        assert_eq!(resume::cursor_of(&stamped), Some(cursor.to_string()));
    }
}
