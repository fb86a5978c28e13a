//! What a large message costs in fresh buffers of its size: `_meta` members join a large object
//! in its own buffer, and a 2026-07-28 client sends a 1 MiB call with two such buffers (its
//! serialization and its frame), not one per copy it passes through. glibc gives a freed top
//! of the heap back to the OS and faults it in again on the next call, so every extra 1 MiB
//! buffer live at once cost about a millisecond per call in page faults.
//!
//! What a session keeps between messages is bounded by `KEPT_BUFFER_MAX`: up to it, the
//! buffers of a run of large messages are reused (no fresh buffer of the message's size on
//! the steady path); beyond it, they are freed once the message is through.
//!
//! Counted by a global allocator that observes this test binary's allocations (fresh ones of
//! 512 KiB and more inside [`counted`], and the bytes live); the tests take turns (a lock).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use bytes::Bytes;
use common::*;
use serde_json::{json, Value};
use zest_core::framing::lines::{LineDecoder, LineEvent};
use zest_core::framing::sse::{SseDecoder, SseItem};
use zest_core::framing::KEPT_BUFFER_MAX;
use zest_core::jsonrpc::{decode, Frame, Message, RawJson, Response, KEPT_TEXTS_MAX};
use zest_core::runtime::{WriteQueue, WriteStep};
use zest_core::schema::methods::CallTool;
use zest_core::schema::{CallToolParams, ProtocolVersion};
use zest_core::server::{RequestStateConfig, RequestStateKey, ServerConfig};
use zest_core::testkit::{Pair, VirtualClock};
use zest_core::RequestOptions;

const MIB: usize = 1024 * 1024;

/// Allocations from this size on are counted.
const LARGE: usize = 512 * 1024;

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static FRESH: AtomicUsize = AtomicUsize::new(0);
static LARGEST_REALLOC: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call forwards to the system allocator unchanged; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= LARGE && COUNTING.load(Ordering::Relaxed) {
            FRESH.fetch_add(1, Ordering::Relaxed);
        }
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's layout contract is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= LARGE && COUNTING.load(Ordering::Relaxed) {
            LARGEST_REALLOC.fetch_max(new_size, Ordering::Relaxed);
        }
        LIVE.fetch_add(new_size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract for `realloc` is passed on as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One test counts at a time.
static TURN: Mutex<()> = Mutex::new(());

/// Large allocations made while `f` ran: how many were fresh, and the largest size a buffer
/// was grown or shrunk to.
struct Counted {
    fresh: usize,
    largest_realloc: usize,
}

fn counted<T>(f: impl FnOnce() -> T) -> (T, Counted) {
    FRESH.store(0, Ordering::Relaxed);
    LARGEST_REALLOC.store(0, Ordering::Relaxed);
    COUNTING.store(true, Ordering::Relaxed);
    let out = f();
    COUNTING.store(false, Ordering::Relaxed);
    let counted = Counted {
        fresh: FRESH.load(Ordering::Relaxed),
        largest_realloc: LARGEST_REALLOC.load(Ordering::Relaxed),
    };
    (out, counted)
}

/// Bytes allocated and not yet freed, in this whole test binary.
fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Slack for what the test harness's other threads allocate meanwhile.
const SLACK: isize = 256 * 1024;

fn large_object() -> RawJson {
    RawJson::from(json!({"text": "x".repeat(MIB)}))
}

#[test]
fn members_join_a_large_object_in_its_own_buffer() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let meta = [("_meta", json!({"io.example/info": {"name": "zest", "version": "1.0.0"}}))];
    let (leading, absent) = (large_object(), large_object());
    for (how, joined) in [
        ("with_leading_members", counted(|| leading.with_leading_members(&meta))),
        ("with_members_if_absent", counted(|| absent.with_members_if_absent(&meta))),
    ] {
        let (raw, counted) = joined;
        assert_eq!(counted.fresh, 0, "{how}: a second buffer of the object's size");
        assert!(
            counted.largest_realloc <= MIB + 1024,
            "{how}: grown to {} bytes for a {MIB}-byte object",
            counted.largest_realloc
        );
        let value: Value = raw.parse().unwrap();
        assert_eq!(value["_meta"]["io.example/info"]["name"], "zest", "{how}");
        assert_eq!(value["text"].as_str().map(str::len), Some(MIB), "{how}");
    }
}

#[test]
fn members_join_an_empty_or_shared_object_and_leave_other_values_alone() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let meta = [("a", json!(1)), ("b", json!("two"))];
    let empty = RawJson::from_string(" { } ".into()).unwrap().with_leading_members(&meta);
    assert_eq!(empty.parse::<Value>().unwrap(), json!({"a": 1, "b": "two"}));
    let shared = RawJson::from(json!({"c": true}));
    let kept = shared.clone();
    let joined = shared.with_leading_members(&meta);
    assert_eq!(joined.parse::<Value>().unwrap(), json!({"a": 1, "b": "two", "c": true}));
    assert_eq!(kept.parse::<Value>().unwrap(), json!({"c": true}), "the other holder's text");
    let array = RawJson::from(json!([1, 2]));
    assert_eq!(array.with_leading_members(&meta).get(), "[1,2]");
    let present = RawJson::from(json!({"a": 0})).with_members_if_absent(&meta);
    assert_eq!(present.parse::<Value>().unwrap(), json!({"b": "two", "a": 0}));
}

fn modern_pair() -> Pair<Handler> {
    let now: Instant = VirtualClock::new().now();
    let mut server = server_config();
    server.supported_versions = ProtocolVersion::ALL.to_vec();
    let key = RequestStateKey::new([9; 32]);
    server.request_state = Some(RequestStateConfig::new(key, now, 1_800_000_000));
    let server: ServerConfig = server;
    let mut pair = Pair::new(client_config().prefer_modern(), server, registry());
    let negotiated = pair.handshake();
    assert_eq!(negotiated.protocol_version, ProtocolVersion::V2026_07_28);
    pair
}

#[test]
fn a_modern_client_sends_a_large_call_with_two_buffers_of_its_size() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let mut pair = modern_pair();
    let params: CallToolParams =
        serde_json::from_value(json!({"name": "echo", "arguments": {"text": "x".repeat(MIB)}}))
            .unwrap();
    // The first large call grows the buffers kept for the next ones; the steady path is
    // the second.
    for round in ["first", "second"] {
        let now = pair.clock.now();
        let opts = RequestOptions::default();
        let (id, counted) = counted(|| pair.client.send::<CallTool>(now, &params, opts));
        id.unwrap();
        pair.pump();
        if round == "first" {
            continue;
        }
        // Its serialization and its frame; before, also the `_meta` splice and two copies
        // kept for a retry.
        assert!(counted.fresh <= 2, "{} fresh buffers of 512 KiB or more", counted.fresh);
        assert!(counted.largest_realloc <= MIB + 4096, "grown to {}", counted.largest_realloc);
    }
}

/// `head`, then `len` bytes of `x` in 64 KiB pieces, then `tail`, each piece handed to `feed`
/// as a pipe delivers them.
fn in_pieces(head: &[u8], len: usize, tail: &[u8], mut feed: impl FnMut(&[u8])) {
    let chunk = vec![b'x'; 64 * 1024];
    feed(head);
    for _ in 0..len / chunk.len() {
        feed(&chunk);
    }
    feed(tail);
}

/// Feeds one JSON line of about `len` bytes; returns how many frames came out.
fn feed_line(decoder: &mut LineDecoder, len: usize) -> usize {
    let mut frames = 0;
    let mut count =
        |event: LineEvent<'_>| frames += usize::from(matches!(event, LineEvent::Frame(_)));
    in_pieces(b"{\"text\":\"", len, b"\"}\n", |bytes| decoder.feed(bytes, &mut count));
    frames
}

#[test]
fn a_machine_keeps_a_returned_frame_buffer_only_up_to_the_bound() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    assert!((2 * MIB..16 * MIB).contains(&KEPT_BUFFER_MAX), "the sizes below straddle it");
    let mut pair = modern_pair();
    for (size, kept) in [(2 * MIB, true), (16 * MIB, false)] {
        let buf = Vec::with_capacity(size);
        let before = live();
        pair.client.recycle(buf);
        let held = live() - before + size as isize;
        match kept {
            true => assert!(held >= size as isize - SLACK, "a {size}-byte buffer was not kept"),
            false => assert!(held <= SLACK, "a {size}-byte buffer was kept ({held} bytes)"),
        }
    }
    let mut queue = WriteQueue::recycling();
    for (size, kept) in [(2 * MIB, true), (16 * MIB, false)] {
        queue.push(Bytes::from(vec![b'x'; size]));
        let WriteStep::Write(bytes) = queue.poll_step() else { panic!("a write is due") };
        let n = bytes.len();
        drop(bytes);
        queue.handle_written(n);
        let spare = queue.take_spare();
        assert_eq!(spare.is_some(), kept, "the spare of a {size}-byte frame");
    }
}

/// Feeds one SSE event whose data is about `len` bytes; returns how many events came out.
fn feed_event(decoder: &mut SseDecoder, len: usize) -> usize {
    let mut events = 0;
    let mut count = |item: SseItem<'_>| events += usize::from(matches!(item, SseItem::Event(_)));
    in_pieces(b"id: 1\ndata: ", len, b"\n\n", |bytes| decoder.feed(bytes, &mut count));
    events
}

/// A decoder fed one message of about `len` bytes by `feed` (which returns how many came
/// out) reuses its buffers on a second 1 MiB message (no fresh buffer, none grown), and holds
/// no more after a 16 MiB message than after a 1 MiB one.
fn reuses_and_bounds(what: &str, mut feed: impl FnMut(usize) -> usize) {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(feed(MIB), 1);
    let (out, second) = counted(|| feed(MIB));
    assert_eq!(out, 1);
    assert_eq!(second.fresh, 0, "{what}: the second 1 MiB message took a fresh buffer");
    assert_eq!(second.largest_realloc, 0, "{what}: the second 1 MiB message grew a buffer");
    let before = live();
    assert_eq!(feed(16 * MIB), 1);
    let kept = live() - before;
    assert!(kept <= SLACK, "{what}: {kept} more bytes held after 16 MiB than after 1 MiB");
    assert_eq!(feed(MIB), 1, "{what}: the decoder goes on");
}

#[test]
fn a_line_decoder_reuses_its_buffer_and_keeps_no_more_than_the_bound() {
    let mut decoder = LineDecoder::default();
    reuses_and_bounds("lines", |len| feed_line(&mut decoder, len));
}

#[test]
fn an_sse_decoder_reuses_its_buffers_and_keeps_no_more_than_the_bound() {
    let mut decoder = SseDecoder::new(64 * MIB);
    reuses_and_bounds("sse", |len| feed_event(&mut decoder, len));
}

#[test]
fn a_large_text_is_made_in_a_kept_buffer() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let value = json!({"text": "x".repeat(MIB)});
    drop(RawJson::from(&value));
    let (raw, made) = counted(|| RawJson::from(&value));
    assert_eq!(made.fresh, 0, "serializing a second 1 MiB value took a fresh buffer");
    assert_eq!(raw.parse::<Value>().unwrap(), value);
    let line = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{}}}"#, raw.get());
    drop(raw);
    drop(decode(line.as_bytes()).unwrap());
    let (frame, read) = counted(|| decode(line.as_bytes()).unwrap());
    assert_eq!(read.fresh, 0, "reading a second 1 MiB result took a fresh buffer");
    let Frame::Single(Message::Response(Response { outcome: Ok(result), .. })) = frame else {
        panic!("a result")
    };
    assert_eq!(result.parse::<Value>().unwrap(), value);
}

#[test]
fn the_kept_text_buffers_are_bounded() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let value = json!({"text": "x".repeat(MIB)});
    // This thread's serialization buffer grows on the first text and is kept.
    drop(RawJson::from(&value));
    let before = live();
    let texts: Vec<RawJson> = (0..3 * KEPT_TEXTS_MAX).map(|_| RawJson::from(&value)).collect();
    drop(texts);
    let kept = live() - before;
    let bound = (KEPT_TEXTS_MAX * (MIB + 64)) as isize + SLACK;
    assert!(kept <= bound, "{kept} bytes kept after dropping {} texts", 3 * KEPT_TEXTS_MAX);
    let huge = json!({"text": "x".repeat(KEPT_BUFFER_MAX)});
    let before = live();
    drop(RawJson::from(&huge));
    assert!(live() - before <= SLACK, "a text past KEPT_BUFFER_MAX was kept");
}

#[test]
fn a_small_text_handed_over_in_a_large_buffer_does_not_hold_it() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let mut text = String::with_capacity(MIB);
    text.push_str(r#"{"a":1}"#);
    let before = live();
    let raw = RawJson::from_string(text).unwrap();
    let held = live() - before;
    assert!(held <= SLACK - MIB as isize, "{held} more bytes held for a 7-byte text");
    assert_eq!(raw.get(), r#"{"a":1}"#);
}
