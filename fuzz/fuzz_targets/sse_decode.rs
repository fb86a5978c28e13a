//! Arbitrary bytes, cut points and a small `max_event` → `framing::sse::SseDecoder`.
//!
//! The items and the last event ID must not depend on the chunking (STYLE rule 14), must match
//! a naive model of the standard run on the whole input, and the decoder never holds more than
//! `max_event` bytes.
#![no_main]

use std::time::Duration;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use zest_core::framing::sse::{SseDecoder, SseItem, SseViolation, TOO_LARGE_HEAD};

#[derive(Arbitrary, Debug)]
struct Case {
    max_event: u8,
    cuts: Vec<u16>,
    bytes: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq)]
enum Owned {
    Event { event_type: String, data: String, id: Option<String> },
    Retry(Duration),
    Violation(SseViolation),
}

fn run(max_event: usize, chunks: &[&[u8]]) -> (Vec<Owned>, Option<String>) {
    let mut d = SseDecoder::new(max_event);
    let mut out = Vec::new();
    let mut sink = |item: SseItem<'_>| {
        out.push(match item {
            SseItem::Event(e) => Owned::Event {
                event_type: e.event_type.into(),
                data: e.data.into(),
                id: e.id.map(Into::into),
            },
            SseItem::Retry(delay) => Owned::Retry(delay),
            SseItem::Violation(v) => Owned::Violation(v),
            _ => unreachable!("no other items yet"),
        })
    };
    for chunk in chunks {
        d.feed(chunk, &mut sink);
        assert!(d.buffered() <= max_event, "holds {} > {max_event}", d.buffered());
    }
    d.finish();
    assert_eq!(d.buffered(), 0, "finish empties the decoder");
    (out, d.last_event_id().map(Into::into))
}

/// The standard's steps, written plainly over the whole input.
fn model(max_event: usize, input: &[u8]) -> (Vec<Owned>, Option<String>) {
    let bytes = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let mut lines = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => lines.push(&bytes[start..i]),
            b'\r' => {
                lines.push(&bytes[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            _ => {
                i += 1;
                continue;
            }
        }
        i += 1;
        start = i;
    }
    // An unterminated last line belongs to an event that never finishes; it is reported only
    // when it is already too large (the decoder does not wait for a line end to say so), and
    // not while it may still be a BOM.
    let tail = &bytes[start..];
    let maybe_bom = input.len() < 3 && b"\xEF\xBB\xBF".starts_with(input);
    let (mut out, mut data, mut event_type) = (Vec::new(), Vec::new(), Vec::new());
    let (mut id_buf, mut last_id) = (String::new(), String::new());
    let (mut size, mut dropping) = (0usize, false);
    for line in lines {
        if line.is_empty() {
            last_id = id_buf.clone();
            if !dropping && !data.is_empty() {
                data.pop();
                let event_type = match String::from_utf8_lossy(&event_type).into_owned() {
                    t if t.is_empty() => "message".to_string(),
                    t => t,
                };
                out.push(Owned::Event {
                    event_type,
                    data: String::from_utf8_lossy(&data).into_owned(),
                    id: (!last_id.is_empty()).then(|| last_id.clone()),
                });
            }
            (data, event_type, size, dropping) = (Vec::new(), Vec::new(), 0, false);
            continue;
        }
        if dropping || line[0] == b':' {
            continue;
        }
        size += line.len();
        if size > max_event {
            let head = model_head(&data, line, max_event - (size - line.len()));
            out.push(Owned::Violation(SseViolation::EventTooLarge { limit: max_event, head }));
            (data, event_type, dropping) = (Vec::new(), Vec::new(), true);
            continue;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(c) => (&line[..c], line[c + 1..].strip_prefix(b" ").unwrap_or(&line[c + 1..])),
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                data.extend_from_slice(value);
                data.push(b'\n');
            }
            b"event" => event_type = value.to_vec(),
            b"id" if !value.contains(&0) => id_buf = String::from_utf8_lossy(value).into_owned(),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let ms = std::str::from_utf8(value).unwrap().parse().unwrap_or(u64::MAX);
                out.push(Owned::Retry(Duration::from_millis(ms)));
            }
            _ => {}
        }
    }
    let tail_counts = !tail.is_empty() && !maybe_bom && !dropping && tail[0] != b':';
    if tail_counts && size + tail.len() > max_event {
        let head = model_head(&data, tail, max_event - size);
        out.push(Owned::Violation(SseViolation::EventTooLarge { limit: max_event, head }));
    }
    (out, (!last_id.is_empty()).then_some(last_id))
}

/// The data head a violation carries: the event's data so far, then the value of the
/// overflowing line's first `room` bytes when it is a `data` line, at most `TOO_LARGE_HEAD`.
fn model_head(data: &[u8], line: &[u8], room: usize) -> Vec<u8> {
    let mut head = data.to_vec();
    head.truncate(TOO_LARGE_HEAD);
    let within = &line[..room.min(line.len())];
    if let Some(value) = within.strip_prefix(b"data:") {
        head.extend_from_slice(value.strip_prefix(b" ").unwrap_or(value));
    }
    head.truncate(TOO_LARGE_HEAD);
    head
}

fuzz_target!(|case: Case| {
    let max_event = usize::from(case.max_event);
    let bytes = &case.bytes[..];
    let whole = run(max_event, &[bytes]);
    let mut cuts: Vec<usize> =
        case.cuts.iter().map(|&c| usize::from(c) % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut from = 0;
    for cut in cuts {
        chunks.push(&bytes[from..cut]);
        from = cut;
    }
    chunks.push(&bytes[from..]);
    assert_eq!(run(max_event, &chunks), whole, "chunks {chunks:?}");
    assert_eq!(whole, model(max_event, bytes));
});
