//! The blocking stdio server's reader serves quick calls itself and writes the answers of
//! one read together, and never lets a call that runs long hold back those read after it.

use std::io::{self, Read, Write};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};
use zest_blocking::{in_memory, ClientApi, Registry, ServerConfig};

/// Far above what any step here takes; only there to turn a hang into a failure.
const HANG: Duration = Duration::from_secs(30);

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Text {
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

#[test]
fn a_quick_call_is_served_on_the_reader_thread() {
    let registry = Registry::new().tool("where", "Names the serving thread", |Nothing {}| {
        thread::current().name().unwrap_or("unnamed").to_owned()
    });
    let (client, _server) = in_memory(ServerConfig::new("reader-test", "1.0"), registry).unwrap();
    // A handler thread would be named zest-handler.
    let served = (0..3).any(|_| {
        let result = client.call_tool("where", json!({})).unwrap();
        result.content[0].as_text() == Some("zest-reader")
    });
    assert!(served, "no call of three ran on the reader");
    client.close().unwrap();
}

#[test]
fn a_call_that_waits_for_a_later_one_does_not_hold_it_back() {
    let (started_tx, started) = mpsc::channel::<()>();
    let (release_tx, release) = mpsc::channel::<()>();
    let (started_tx, release) = (Mutex::new(started_tx), Arc::new(Mutex::new(release)));
    let release_tx = Mutex::new(release_tx);
    let registry = Registry::new()
        .tool("wait", "Waits for release", move |Nothing {}| {
            let _ = started_tx.lock().unwrap().send(());
            let freed = release.lock().unwrap().recv_timeout(HANG).is_ok();
            if freed { "released" } else { "never released" }.to_owned()
        })
        .tool("release", "Releases wait", move |Nothing {}| {
            let _ = release_tx.lock().unwrap().send(());
            "done".to_owned()
        });
    let (client, _server) = in_memory(ServerConfig::new("reader-test", "1.0"), registry).unwrap();
    let waiting = {
        let client = client.clone();
        thread::spawn(move || client.call_tool("wait", json!({})))
    };
    started.recv_timeout(HANG).expect("wait started");
    // Read while "wait" runs on the reader: served only once another reader took over.
    let (done_tx, done) = mpsc::channel();
    let releasing = client.clone();
    thread::spawn(move || done_tx.send(releasing.call_tool("release", json!({}))));
    let released = done.recv_timeout(HANG).expect("release answered in time").unwrap();
    assert_eq!(released.content[0].as_text(), Some("done"));
    let waited = waiting.join().unwrap().unwrap();
    assert_eq!(waited.content[0].as_text(), Some("released"));
    client.close().unwrap();
}

/// Input that hands out one chunk per read, in order; ends when the sender is dropped.
struct Chunks(Receiver<Vec<u8>>);

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Ok(chunk) = self.0.recv() else { return Ok(0) };
        assert!(chunk.len() <= buf.len(), "a chunk fits one read");
        buf[..chunk.len()].copy_from_slice(&chunk);
        Ok(chunk.len())
    }
}

/// Output that reports each `write` call's bytes.
struct Writes(Sender<Vec<u8>>);

impl Write for Writes {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let _ = self.0.send(buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn frames(values: impl IntoIterator<Item = Value>) -> Vec<u8> {
    let mut bytes = Vec::new();
    for value in values {
        bytes.extend(serde_json::to_vec(&value).unwrap());
        bytes.push(b'\n');
    }
    bytes
}

/// Serves a session over `Chunks` and `Writes`: sends the handshake, then `calls` calls in
/// one chunk, and returns how many writes their answers took.
fn writes_for_calls_read_at_once(calls: usize) -> usize {
    let (input, chunks) = mpsc::channel();
    let (written, writes) = mpsc::channel();
    let registry = Registry::new().tool("echo", "Echoes", |Text { text }| text);
    let config = ServerConfig::new("reader-test", "1.0");
    let server = thread::spawn(move || {
        zest_blocking::serve(config, registry, Chunks(chunks), Writes(written))
    });
    input
        .send(frames([json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "chunks", "version": "1"}}})]))
        .unwrap();
    writes.recv_timeout(HANG).expect("the initialize answer");
    let mut batch = vec![json!({"jsonrpc": "2.0", "method": "notifications/initialized"})];
    batch.extend((1..=calls).map(|id| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "echo", "arguments": {"text": "hi"}}})
    }));
    input.send(frames(batch)).unwrap();
    let (mut answers, mut count) = (0, 0);
    while answers < calls {
        let bytes = writes.recv_timeout(HANG).expect("every answer");
        answers += bytes.iter().filter(|&&b| b == b'\n').count();
        count += 1;
    }
    drop(input);
    server.join().unwrap();
    count
}

#[test]
fn the_answers_of_one_read_go_out_in_one_write() {
    // A reader preempted for more than a tick hands its calls to threads (each writing its
    // own answer): one of up to twenty tries must find the quiet case.
    let mut fewest = usize::MAX;
    for _ in 0..20 {
        fewest = fewest.min(writes_for_calls_read_at_once(8));
        if fewest == 1 {
            break;
        }
    }
    assert_eq!(fewest, 1, "8 answers to one read took {fewest} writes");
}
