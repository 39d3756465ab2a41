//! The frame transport's rules (see `frames.rs`), over a socket that records what it is sent.

use std::future::poll_fn;

use super::*;

/// A socket fed from a list, recording frames, flushes and the close.
#[derive(Default)]
struct Fake {
    incoming: VecDeque<Incoming>,
    /// Frames queued but not flushed, then flushed ones (each flush a batch).
    queued: Vec<String>,
    batches: Arc<Mutex<Vec<Vec<String>>>>,
    closed: Arc<Mutex<bool>>,
    /// Ends (instead of staying pending) once `incoming` is empty.
    ends: bool,
}

impl Socket for Fake {
    fn poll_incoming(&mut self, _: &mut Context<'_>) -> Poll<Option<Incoming>> {
        match self.incoming.pop_front() {
            Some(message) => Poll::Ready(Some(message)),
            None if self.ends => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn start_send(&mut self, text: String) -> io::Result<()> {
        self.queued.push(text);
        Ok(())
    }
    fn poll_flush(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        if !self.queued.is_empty() {
            lock_vec(&self.batches).push(std::mem::take(&mut self.queued));
        }
        Poll::Ready(Ok(()))
    }
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        *self.closed.lock().expect("lock") = true;
        self.poll_flush(cx)
    }
}

fn lock_vec(v: &Mutex<Vec<Vec<String>>>) -> MutexGuard<'_, Vec<Vec<String>>> {
    v.lock().expect("lock")
}

fn fake(incoming: Vec<Incoming>) -> (Fake, Arc<Mutex<Vec<Vec<String>>>>) {
    let socket = Fake { incoming: incoming.into(), ends: true, ..Fake::default() };
    let batches = socket.batches.clone();
    (socket, batches)
}

/// Everything the reader hands over until the end.
async fn read_all(reader: &mut FrameReader<Fake>, chunk: usize) -> String {
    let mut out = Vec::new();
    let mut buf = vec![0; chunk];
    loop {
        let n = poll_fn(|cx| reader.poll_read_bytes(cx, &mut buf)).await.expect("read");
        if n == 0 {
            return String::from_utf8(out).expect("utf-8");
        }
        out.extend_from_slice(&buf[..n]);
    }
}

async fn write_all(writer: &mut FrameWriter<Fake>, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let n = poll_fn(|cx| writer.poll_write_bytes(cx, bytes)).await.expect("write");
        bytes = &bytes[n..];
    }
}

#[tokio::test]
async fn text_frames_become_lines_with_their_line_breaks_as_spaces_and_fill_one_read() {
    let frames = vec![Incoming::Text("{\n  \"a\": 1\r\n}".into()), Incoming::Other, Incoming::Text("{}".into())];
    let (socket, _) = fake(frames);
    let (mut reader, _writer) = split(socket, 64, None, None);
    let mut buf = [0u8; 64];
    let n = poll_fn(|cx| reader.poll_read_bytes(cx, &mut buf)).await.expect("read");
    assert_eq!(&buf[..n], b"{   \"a\": 1  }\n{}\n", "both frames in one read");
}

#[tokio::test]
async fn a_read_smaller_than_a_frame_gets_the_rest_next_time() {
    let (socket, _) = fake(vec![Incoming::Text("{\"abc\":123}".into()), Incoming::Text("{}".into())]);
    let (mut reader, _writer) = split(socket, 64, None, None);
    assert_eq!(read_all(&mut reader, 3).await, "{\"abc\":123}\n{}\n");
}

#[tokio::test]
async fn the_peers_close_ends_the_input() {
    let frames = vec![Incoming::Text("1".into()), Incoming::Close, Incoming::Text("2".into())];
    let (socket, _) = fake(frames);
    let (mut reader, _writer) = split(socket, 64, None, None);
    assert_eq!(read_all(&mut reader, 16).await, "1\n");
}

#[tokio::test]
async fn lines_become_frames_sent_together_by_one_flush_and_blank_lines_none() {
    let (socket, batches) = fake(vec![]);
    let (_reader, mut writer) = split(socket, 64, None, None);
    // A line split across writes is one frame.
    write_all(&mut writer, b"{\"a\":1}\r\n\n{\"b\"").await;
    write_all(&mut writer, b":2}\n{\"c\":3}\n").await;
    assert!(lock_vec(&batches).is_empty(), "nothing leaves before the flush");
    poll_fn(|cx| writer.poll_flush_bytes(cx)).await.expect("flush");
    assert_eq!(*lock_vec(&batches), [vec!["{\"a\":1}", "{\"b\":2}", "{\"c\":3}"]]);
}

#[tokio::test]
async fn an_oversized_line_is_skipped_and_the_next_goes_out() {
    let (socket, batches) = fake(vec![]);
    let (_reader, mut writer) = split(socket, 16, None, None);
    let long = format!("{}\n{{\"ok\":true}}\n", "x".repeat(40));
    write_all(&mut writer, &long.as_bytes()[..20]).await;
    write_all(&mut writer, &long.as_bytes()[20..]).await;
    poll_fn(|cx| writer.poll_close_bytes(cx)).await.expect("close");
    assert_eq!(*lock_vec(&batches), [vec!["{\"ok\":true}"]]);
}

#[tokio::test]
async fn a_binary_frame_is_answered_with_an_invalid_request_error_and_reading_goes_on() {
    let mut frames: Vec<Incoming> = (0..CONTROL_QUEUE + 5).map(|_| Incoming::Binary).collect();
    frames.push(Incoming::Text("{}".into()));
    let (socket, batches) = fake(frames);
    let (mut reader, _writer) = split(socket, 64, None, None);
    assert_eq!(read_all(&mut reader, 64).await, "{}\n");
    let sent: Vec<String> = lock_vec(&batches).concat();
    assert!(!sent.is_empty() && sent.iter().all(|s| s == BINARY_FRAME_ERROR), "{sent:?}");
    let error: serde_json::Value = serde_json::from_str(&sent[0]).expect("json");
    assert_eq!((error["error"]["code"].as_i64(), error["id"].is_null()), (Some(-32600), true));
}

#[tokio::test(start_paused = true)]
async fn stop_cancels_the_prompts_in_flight_then_ends_the_input_once_answered() {
    let prompt = r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}"#;
    let socket = Fake { incoming: vec![Incoming::Text(prompt.into())].into(), ..Fake::default() };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let turns = Arc::new(InFlight::default());
    let signal = Box::pin(async move {
        let _ = rx.await;
    });
    let stop = Stop { signal, turns: turns.clone(), patience: Duration::from_secs(60) };
    let (mut reader, mut writer) = split(socket, 256, None, Some(stop));
    let mut buf = [0u8; 256];
    let n = poll_fn(|cx| reader.poll_read_bytes(cx, &mut buf)).await.expect("read");
    assert_eq!(&buf[..n - 1], prompt.as_bytes());
    drop(tx);
    let n = poll_fn(|cx| reader.poll_read_bytes(cx, &mut buf)).await.expect("read");
    let cancel: serde_json::Value = serde_json::from_slice(&buf[..n]).expect("json");
    assert_eq!(
        (cancel["method"].as_str(), cancel["params"]["sessionId"].as_str()),
        (Some("session/cancel"), Some("s1"))
    );
    // The input goes on until the prompt's answer passed.
    let pending = poll_fn(|cx| Poll::Ready(reader.poll_read_bytes(cx, &mut buf).is_pending())).await;
    assert!(pending, "still reading while the prompt is unanswered");
    write_all(&mut writer, b"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"stopReason\":\"cancelled\"}}\n").await;
    let n = poll_fn(|cx| reader.poll_read_bytes(cx, &mut buf)).await.expect("read");
    assert_eq!(n, 0, "the input ended");
}

#[tokio::test]
async fn frames_both_ways_count_as_activity() {
    let (socket, _) = fake(vec![Incoming::Text("{}".into())]);
    let activity = Arc::new(Activity::new());
    let (mut reader, mut writer) = split(socket, 64, Some(activity.clone()), None);
    tokio::time::pause();
    tokio::time::advance(Duration::from_secs(5)).await;
    read_all(&mut reader, 64).await;
    let idle = tokio::time::timeout(Duration::from_secs(4), activity.idle(Duration::from_secs(5))).await;
    assert!(idle.is_err(), "the read counted");
    write_all(&mut writer, b"{}\n").await;
    let idle = tokio::time::timeout(Duration::from_secs(4), activity.idle(Duration::from_secs(5))).await;
    assert!(idle.is_err(), "the write counted");
}

/// A socket with nothing to read that counts how often it is read and keeps the last waker.
struct Quiet {
    reads: Arc<Mutex<(usize, Option<std::task::Waker>)>>,
}

impl Socket for Quiet {
    fn poll_incoming(&mut self, cx: &mut Context<'_>) -> Poll<Option<Incoming>> {
        let mut reads = self.reads.lock().expect("lock");
        reads.0 += 1;
        reads.1 = Some(cx.waker().clone());
        if reads.0 == 3 { Poll::Ready(Some(Incoming::Text("{}".into()))) } else { Poll::Pending }
    }
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn start_send(&mut self, _: String) -> io::Result<()> {
        Ok(())
    }
    fn poll_flush(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn the_socket_is_read_again_only_after_it_woke_the_reader() {
    let reads = Arc::new(Mutex::new((0, None::<std::task::Waker>)));
    let (mut reader, _writer) = split(Quiet { reads: reads.clone() }, 64, None, None);
    let mut buf = [0u8; 64];
    let mut poll = |reader: &mut FrameReader<Quiet>| {
        let waker = std::task::Waker::noop();
        reader.poll_read_bytes(&mut Context::from_waker(waker), &mut buf)
    };
    assert!(poll(&mut reader).is_pending());
    assert!(poll(&mut reader).is_pending());
    assert_eq!(reads.lock().expect("lock").0, 1, "not read again without a wake-up");
    let waker = reads.lock().expect("lock").1.take().expect("a waker");
    waker.wake();
    assert!(poll(&mut reader).is_pending());
    assert_eq!(reads.lock().expect("lock").0, 2, "read again once woken");
    reads.lock().expect("lock").1.take().expect("a waker").wake();
    assert!(matches!(poll(&mut reader), Poll::Ready(Ok(3))), "the frame, then nothing buffered");
    assert_eq!(reads.lock().expect("lock").0, 4, "after a frame the socket is read again at once");
}
