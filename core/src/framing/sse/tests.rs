use std::time::Duration;

use quickcheck::{quickcheck, TestResult};

use super::{
    encode_comment, encode_event, encode_priming, encode_retry, SseDecoder, SseEncodeError,
    SseItem, SseViolation, DEFAULT_MAX_EVENT,
};

/// An [`SseItem`] that owns its text, so items from many feeds can be collected.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Owned {
    Event { event_type: String, data: String, id: Option<String> },
    Retry(Duration),
    Violation(SseViolation),
}

fn own(item: SseItem<'_>) -> Owned {
    match item {
        SseItem::Event(e) => Owned::Event {
            event_type: e.event_type.into(),
            data: e.data.into(),
            id: e.id.map(Into::into),
        },
        SseItem::Retry(delay) => Owned::Retry(delay),
        SseItem::Violation(v) => Owned::Violation(v),
    }
}

/// What a stream decoded to: its items, and the last event ID after `finish`.
type Decoded = (Vec<Owned>, Option<String>);

/// Feeds `chunks` in order, then finishes the stream.
fn decode_chunks(max_event: usize, chunks: &[&[u8]]) -> Decoded {
    let mut decoder = SseDecoder::new(max_event);
    let mut items = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk, &mut |item| items.push(own(item)));
        assert!(decoder.buffered() <= max_event, "holds {} > {max_event}", decoder.buffered());
    }
    decoder.finish();
    assert_eq!(decoder.buffered(), 0, "finish leaves nothing behind");
    (items, decoder.last_event_id().map(Into::into))
}

fn decode(input: &[u8]) -> Vec<Owned> {
    decode_chunks(DEFAULT_MAX_EVENT, &[input]).0
}

fn bytewise(max_event: usize, input: &[u8]) -> Decoded {
    let chunks: Vec<&[u8]> = input.chunks(1).collect();
    decode_chunks(max_event, &chunks)
}

fn event(event_type: &str, data: &str, id: Option<&str>) -> Owned {
    Owned::Event { event_type: event_type.into(), data: data.into(), id: id.map(Into::into) }
}

fn message(data: &str) -> Owned {
    event("message", data, None)
}

fn retry(millis: u64) -> Owned {
    Owned::Retry(Duration::from_millis(millis))
}

/// The violation of an event over `limit`, whose data began with `head`.
fn too_large(limit: usize, head: &str) -> Owned {
    Owned::Violation(SseViolation::EventTooLarge { limit, head: head.as_bytes().to_vec() })
}

#[test]
fn worked_examples_of_the_standard() {
    assert_eq!(decode(b"data: a\ndata: b\n\n"), [message("a\nb")]);
    assert_eq!(decode(b"data\n\n"), [message("")]);
    assert_eq!(decode(b"data\ndata\n\n"), [message("\n")]);
    assert_eq!(decode(b"data:test\n\ndata: test\n\n"), [message("test"), message("test")]);
    assert_eq!(decode_chunks(64, &[b"id: 5\n\n"]), (vec![], Some("5".into())));
}

#[test]
fn only_one_leading_space_is_removed_from_a_value() {
    assert_eq!(decode(b"data:  x \ndata:\tx\n\n"), [message(" x \n\tx")]);
}

#[test]
fn cr_lf_and_crlf_all_end_lines() {
    assert_eq!(
        decode(b"data: a\rdata: b\ndata: c\r\n\r\rdata: d\n\r\n"),
        [message("a\nb\nc"), message("d")]
    );
}

#[test]
fn crlf_split_across_feeds_is_one_line_end() {
    // Were the LF taken for a second line end, "a" would be dispatched alone.
    let chunks: [&[u8]; 3] = [b"data: a\r", b"\ndata: b\r", b"\n\r\n"];
    assert_eq!(decode_chunks(64, &chunks).0, [message("a\nb")]);
    // A CR at the end of a feed still ends its line; an empty feed does not settle it.
    let chunks: [&[u8]; 4] = [b"data: a\r", b"", b"\r", b"\ndata: b\n\n"];
    assert_eq!(decode_chunks(64, &chunks).0, [message("a"), message("b")]);
}

#[test]
fn a_leading_bom_is_removed_once_however_it_is_chunked() {
    let input = b"\xEF\xBB\xBFid: 1\ndata: x\n\n";
    let expected = (vec![event("message", "x", Some("1"))], Some("1".into()));
    assert_eq!(decode_chunks(64, &[input]), expected);
    assert_eq!(bytewise(64, input), expected);
    // A second BOM is content: it makes the field name unknown.
    assert_eq!(decode(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n"), [message("y")]);
    // A BOM after the start is content too.
    assert_eq!(decode(b"data: a\xEF\xBB\xBF\n\n"), [message("a\u{FEFF}")]);
}

#[test]
fn a_partial_bom_is_content_not_stripped() {
    for input in [&b"\xEF\xBBdata: x\n\ndata: y\n\n"[..], b"\xEFdata: x\n\ndata: y\n\n"] {
        assert_eq!(decode_chunks(64, &[input]).0, [message("y")]);
        assert_eq!(bytewise(64, input).0, [message("y")]);
    }
    assert_eq!(decode(b"\xEF\xBB\n\ndata: y\n\n"), [message("y")]);
    assert_eq!(decode(b"\xEF\xBB"), []);
}

#[test]
fn comments_are_ignored_even_when_split() {
    let input = b": keep-alive\n:\ndata: a\n: inside: data: b\n\n:x\n\n";
    assert_eq!(decode(input), [message("a")]);
    assert_eq!(bytewise(64, input).0, [message("a")]);
}

#[test]
fn a_line_without_colon_is_a_field_with_an_empty_value() {
    assert_eq!(decode(b"data\ndata: x\nevent\n\n"), [message("\nx")]);
    assert_eq!(decode(b"id: 7\nid\ndata: x\n\n"), [message("x")]);
}

#[test]
fn unknown_and_differently_cased_fields_are_ignored() {
    assert_eq!(decode(b"Data: a\nDATA: b\nfoo: c\ndata : d\ndata: e\n\n"), [message("e")]);
}

#[test]
fn event_type_defaults_to_message_and_resets_after_dispatch() {
    let input = b"event: endpoint\ndata: /post\n\ndata: {}\n\nevent:\ndata: x\n\n";
    assert_eq!(decode(input), [event("endpoint", "/post", None), message("{}"), message("x")]);
}

#[test]
fn an_event_without_data_fires_nothing_and_clears_its_type() {
    assert_eq!(decode(b"event: a\n\ndata: x\n\n"), [message("x")]);
    assert_eq!(decode(b"event: a\nretry: 5\n\n\n\n"), [retry(5)]);
}

#[test]
fn the_last_event_id_persists_until_changed_or_cleared() {
    let input = b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 2\ndata: d\n\n";
    let (items, last) = decode_chunks(64, &[input]);
    assert_eq!(
        items,
        [
            event("message", "a", Some("1")),
            event("message", "b", Some("1")),
            message("c"),
            event("message", "d", Some("2")),
        ]
    );
    assert_eq!(last.as_deref(), Some("2"));
}

#[test]
fn an_id_holding_nul_is_ignored() {
    let input = b"id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n";
    let (items, last) = decode_chunks(64, &[input]);
    assert_eq!(items, [event("message", "a", Some("1")), event("message", "b", Some("1"))]);
    assert_eq!(last.as_deref(), Some("1"));
}

#[test]
fn the_last_event_id_moves_only_at_a_blank_line() {
    let mut decoder = SseDecoder::new(64);
    decoder.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b\n", &mut |_| {});
    assert_eq!(decoder.last_event_id(), Some("1"));
    decoder.feed(b"\n", &mut |_| {});
    assert_eq!(decoder.last_event_id(), Some("2"));
}

#[test]
fn retry_needs_ascii_digits_only() {
    let input = b"retry: 1500\nretry: 1a\nretry: -1\nretry:\nretry:  5\nretry: 1.5\nretry: \
        \xD9\xA1\nretry:007\n";
    assert_eq!(decode(input), [retry(1500), retry(7)]);
    assert_eq!(decode(b"retry: 99999999999999999999999\n"), [retry(u64::MAX)]);
}

#[test]
fn an_unfinished_event_is_dropped_at_the_end_of_the_stream() {
    let (items, last) = decode_chunks(64, &[b"id: 1\ndata: a\n\nid: 2\ndata: b\n"]);
    assert_eq!(items, [event("message", "a", Some("1"))]);
    assert_eq!(last.as_deref(), Some("1"), "the unfinished event's id is dropped too");
    assert_eq!(decode(b"data: a\n\ndata: b"), [message("a")]);
    assert_eq!(decode(b"data: a\n\ndata: b\r"), [message("a")]);
}

#[test]
fn after_finish_a_new_stream_starts_and_the_last_event_id_carries_over() {
    let mut decoder = SseDecoder::new(64);
    let mut items = Vec::new();
    decoder.feed(b"id: 9\ndata: a\n\nevent: x\ndata: lost\n", &mut |i| items.push(own(i)));
    decoder.finish();
    decoder.feed(b"\xEF\xBB\xBFdata: b\n\n", &mut |i| items.push(own(i)));
    assert_eq!(items, [event("message", "a", Some("9")), event("message", "b", Some("9"))]);
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    let input = b"event: \xFFt\nid: \xC3\ndata: a\xE2\x82\ndata: \xF0\x9F\x98\x80\n\n";
    let expected = event("\u{FFFD}t", "a\u{FFFD}\n\u{1F600}", Some("\u{FFFD}"));
    assert_eq!(decode(input), std::slice::from_ref(&expected));
    assert_eq!(bytewise(64, input).0, [expected]);
}

#[test]
fn an_event_at_the_limit_passes_and_one_byte_more_is_dropped() {
    // 8 + 7 = 15 bytes of lines; comments and line ends are not counted.
    let ok = b"data: ab\n: comment\r\nid: 123\r\n\r\n";
    let over = b"data: abc\nid: 123\n\n";
    let input = [&ok[..], over, ok].concat();
    let expected = vec![event("message", "ab", Some("123")), too_large(15, "abc\n")];
    let expected = [expected, vec![event("message", "ab", Some("123"))]].concat();
    assert_eq!(decode_chunks(15, &[&input]).0, expected);
    assert_eq!(bytewise(15, &input).0, expected);
}

#[test]
fn a_too_large_event_is_reported_once_then_the_stream_recovers() {
    let input = b"retry: 1\nid: 4\ndata: 0123456789\ndata: 0123456789\nretry: 2\ndata: x\n\n\
        data: next\n\n";
    // The id read before the overflow still moves the last event ID at the blank line.
    let items = vec![retry(1), too_large(24, "01234"), event("message", "next", Some("4"))];
    let expected = (items, Some("4".to_string()));
    assert_eq!(decode_chunks(24, &[input]), expected);
    assert_eq!(bytewise(24, input), expected);
}

#[test]
fn a_long_line_is_caught_while_it_arrives() {
    let mut decoder = SseDecoder::new(16);
    let mut items = Vec::new();
    decoder.feed(b"data: 0123456789", &mut |i| items.push(own(i)));
    assert!(items.is_empty());
    assert_eq!(decoder.buffered(), 16);
    decoder.feed(b"a", &mut |i| items.push(own(i)));
    assert_eq!(items, [too_large(16, "0123456789")], "reported before the line ends");
    assert_eq!(decoder.buffered(), 0);
    decoder.feed(b"bcd\n\ndata: ok\n\n", &mut |i| items.push(own(i)));
    assert_eq!(items, [too_large(16, "0123456789"), message("ok")]);
}

#[test]
fn ten_mib_event_is_dropped_with_bounded_buffering() {
    const LIMIT: usize = 1024;
    let mut decoder = SseDecoder::new(LIMIT);
    let mut items = Vec::new();
    let line = [b"data: ".as_slice(), &[b'x'; 1000], b"\r\n"].concat();
    let mut sent = 0;
    while sent < 10 * 1024 * 1024 {
        decoder.feed(&line, &mut |i| items.push(own(i)));
        sent += line.len();
        assert!(decoder.buffered() <= LIMIT, "buffered {}", decoder.buffered());
    }
    decoder.feed(&[b'y'; 3 * LIMIT], &mut |i| items.push(own(i)));
    decoder.feed(b"\r\n\r\ndata: next\r\n\r\n", &mut |i| items.push(own(i)));
    assert_eq!(items, [too_large(LIMIT, &"x".repeat(256)), message("next")]);
    assert_eq!(decoder.buffered(), 0);
}

#[test]
fn a_zero_limit_drops_every_event_with_lines() {
    assert_eq!(
        decode_chunks(0, &[b": ok\n\ndata\n\nid: 1\n\n"]).0,
        [too_large(0, ""), too_large(0, "")]
    );
}

const STREAM: &[u8] = b"\xEF\xBB\xBF: welcome\r\n\
    retry: 3000\r\n\
    id: s1-0\r\n\
    data:\r\n\r\n\
    id: s1-1\n\
    data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n\
    event: note\rdata: first\rdata:  second\r\r\
    id: bad\0id\n\
    data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":\
    [{\"type\":\"text\",\"text\":\"x\"}]}}\n\
    retry: soon\n\
    \n\
    :\n\
    data: this event is far too large for the limit used in the split tests,\n\
    data: which is 110 bytes of lines (comments and line ends not counted)\n\
    \n\
    id\ndata: no id\r\n\r\n\
    data: unfinished";

#[test]
fn every_two_way_split_matches_whole() {
    const LIMIT: usize = 110;
    let whole = decode_chunks(LIMIT, &[STREAM]);
    let json = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}]}}"#;
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
    let expected = vec![
        retry(3000),
        event("message", "", Some("s1-0")),
        event("message", progress, Some("s1-1")),
        event("note", "first\n second", Some("s1-1")),
        event("message", json, Some("s1-1")),
        too_large(
            LIMIT,
            "this event is far too large for the limit used in the split tests,\n\
             which is 110 bytes of lines (com",
        ),
        message("no id"),
    ];
    assert_eq!(whole, (expected, None));
    for i in 0..=STREAM.len() {
        let (a, b) = STREAM.split_at(i);
        assert_eq!(decode_chunks(LIMIT, &[a, b]), whole, "split at {i}");
    }
    assert_eq!(bytewise(LIMIT, STREAM), whole, "byte by byte");
}

#[test]
fn encoded_events_decode_to_what_was_encoded() {
    let mut stream = Vec::new();
    stream.extend_from_slice(&encode_priming("s-0", Some(Duration::from_millis(2500))).unwrap());
    stream.extend_from_slice(&encode_comment("keep-alive\r\nsecond line"));
    stream.extend_from_slice(&encode_event(Some("s-1"), None, r#"{"a":1}"#).unwrap());
    stream.extend_from_slice(&encode_event(None, Some("note"), "one\ntwo\r\nthree\rfour").unwrap());
    stream.extend_from_slice(&encode_retry(Duration::from_micros(1_999_999)));
    stream.extend_from_slice(&encode_event(Some(""), Some(""), "").unwrap());
    stream.extend_from_slice(&encode_event(None, None, " lead\n\ntrail \n").unwrap());
    let expected = vec![
        retry(2500),
        event("message", "", Some("s-0")),
        event("message", r#"{"a":1}"#, Some("s-1")),
        event("note", "one\ntwo\nthree\nfour", Some("s-1")),
        retry(1999),
        message(""),
        message(" lead\n\ntrail \n"),
    ];
    assert_eq!(decode_chunks(64, &[&stream]), (expected.clone(), None));
    assert_eq!(bytewise(64, &stream), (expected, None));
}

#[test]
fn encoded_bytes_are_plain_lines() {
    assert_eq!(
        &encode_priming("7", Some(Duration::from_secs(1))).unwrap()[..],
        b"id: 7\nretry: 1000\ndata:\n\n"
    );
    assert_eq!(
        &encode_event(Some("1"), Some("e"), "a\nb").unwrap()[..],
        b"id: 1\nevent: e\ndata: a\ndata: b\n\n"
    );
    assert_eq!(&encode_comment("")[..], b":\n");
    assert_eq!(&encode_retry(Duration::MAX)[..], format!("retry: {}\n", u64::MAX).as_bytes());
}

#[test]
fn fields_that_cannot_be_one_line_are_refused() {
    for id in ["a\nb", "a\rb", "a\0b"] {
        assert_eq!(encode_event(Some(id), None, "x"), Err(SseEncodeError::InvalidId));
        assert_eq!(encode_priming(id, None), Err(SseEncodeError::InvalidId));
    }
    for event_type in ["a\nb", "a\rb"] {
        assert_eq!(
            encode_event(None, Some(event_type), "x"),
            Err(SseEncodeError::InvalidEventType)
        );
    }
    assert_eq!(SseEncodeError::InvalidId.to_string(), "event id contains CR, LF or NUL");
    let violation = SseViolation::EventTooLarge { limit: 8, head: b"{}".to_vec() };
    assert_eq!(violation.to_string(), "event exceeds the 8-byte limit and was discarded");
}

/// Maps arbitrary bytes onto a stream dense in line ends, field names, colons and BOM bytes.
fn interesting(bytes: &[u8]) -> Vec<u8> {
    const PIECES: &[&[u8]] = &[
        b"\n", b"\r", b"\r\n", b":", b" ", b"data", b"data: ", b"id: ", b"event: ", b"retry: ",
        b"1", b"x", b"\0", b"\xEF", b"\xBB", b"\xBF", b"\xFF", b"\n\n",
    ];
    bytes.iter().flat_map(|&b| PIECES[usize::from(b) % PIECES.len()].iter().copied()).collect()
}

/// Cuts `stream` at the positions `cuts` (taken modulo its length).
fn chunk_at<'a>(stream: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for cut in cuts {
        chunks.push(&stream[start..cut]);
        start = cut;
    }
    chunks.push(&stream[start..]);
    chunks
}

fn chunking_is_invisible(stream: &[u8], cuts: &[usize], max_event: usize) -> TestResult {
    let whole = decode_chunks(max_event, &[stream]);
    let chunked = decode_chunks(max_event, &chunk_at(stream, cuts));
    if chunked == whole {
        TestResult::passed()
    } else {
        TestResult::error(format!("{whole:?} != {chunked:?}"))
    }
}

quickcheck! {
    fn any_chunking_of_any_stream_matches_whole(bytes: Vec<u8>, cuts: Vec<usize>, limit: u8)
        -> TestResult
    {
        chunking_is_invisible(&bytes, &cuts, usize::from(limit % 32))
    }

    fn any_chunking_of_a_field_heavy_stream_matches_whole(
        bytes: Vec<u8>,
        cuts: Vec<usize>,
        limit: u8
    ) -> TestResult {
        chunking_is_invisible(&interesting(&bytes), &cuts, usize::from(limit))
    }

    fn encoded_events_round_trip_under_any_chunking(
        events: Vec<(Option<String>, Option<String>, String)>,
        cuts: Vec<usize>
    ) -> TestResult {
        let mut stream = Vec::new();
        let mut expected = Vec::new();
        let mut last_id = None;
        for (id, event_type, data) in &events {
            let Ok(bytes) = encode_event(id.as_deref(), event_type.as_deref(), data) else {
                continue;
            };
            stream.extend_from_slice(&bytes);
            if let Some(id) = id {
                last_id = (!id.is_empty()).then(|| id.clone());
            }
            let event_type = event_type.as_deref().filter(|t| !t.is_empty()).unwrap_or("message");
            let data = data.replace("\r\n", "\n").replace('\r', "\n");
            expected.push(event(event_type, &data, last_id.as_deref()));
        }
        let decoded = decode_chunks(DEFAULT_MAX_EVENT, &chunk_at(&stream, &cuts));
        if decoded == (expected.clone(), last_id.clone()) {
            TestResult::passed()
        } else {
            TestResult::error(format!("{decoded:?} != {expected:?}, {last_id:?}"))
        }
    }
}

#[test]
fn an_oversized_event_keeps_the_start_of_its_data_to_read_its_id_from() {
    let json = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"text":"{}"}}}}"#, "x".repeat(1000));
    let input = format!("id: 9\ndata: {json}\n\ndata: next\n\n");
    let (items, _) = bytewise(512, input.as_bytes());
    let Owned::Violation(SseViolation::EventTooLarge { limit: 512, head }) = &items[0] else {
        panic!("expected a violation, got {items:?}")
    };
    assert_eq!(head.len(), 256);
    assert_eq!(head[..], json.as_bytes()[..256]);
    assert_eq!(items[1], event("message", "next", Some("9")), "the id still moved");
}
