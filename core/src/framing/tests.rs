use quickcheck::{quickcheck, TestResult};

use super::lines::{LineDecoder, LineEvent, LineViolation, DEFAULT_MAX_LINE, TOO_LONG_HEAD};

/// A [`LineEvent`] that owns its bytes, so events from many feeds can be collected.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Owned {
    Frame(Vec<u8>),
    Violation(LineViolation),
}

/// Owns an event; the head of a `TooLong` is left out (see `heads`, which checks it).
fn own(event: LineEvent<'_>) -> Owned {
    match event {
        LineEvent::Frame(bytes) => Owned::Frame(bytes.to_vec()),
        LineEvent::Violation(LineViolation::TooLong { limit, dropped, .. }) => {
            Owned::Violation(LineViolation::TooLong { limit, dropped, head: Vec::new() })
        }
        LineEvent::Violation(v) => Owned::Violation(v),
    }
}

/// The heads of the `TooLong` violations decoding `chunks` reports.
fn heads(max_line: usize, chunks: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut decoder = LineDecoder::new(max_line);
    let mut heads = Vec::new();
    let mut sink = |e: LineEvent<'_>| {
        if let LineEvent::Violation(LineViolation::TooLong { head, .. }) = e {
            heads.push(head);
        }
    };
    for chunk in chunks {
        decoder.feed(chunk, &mut sink);
    }
    decoder.finish(&mut sink);
    heads
}

/// Feeds `chunks` in order, then finishes the stream.
fn decode_chunks(max_line: usize, chunks: &[&[u8]]) -> Vec<Owned> {
    let mut decoder = LineDecoder::new(max_line);
    let mut events = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk, &mut |e| events.push(own(e)));
    }
    decoder.finish(&mut |e| events.push(own(e)));
    assert_eq!(decoder.buffered(), 0, "finish leaves nothing behind");
    events
}

fn decode(input: &[u8]) -> Vec<Owned> {
    decode_chunks(DEFAULT_MAX_LINE, &[input])
}

fn frame(bytes: &[u8]) -> Owned {
    Owned::Frame(bytes.to_vec())
}

fn too_long(limit: usize, dropped: usize) -> Owned {
    Owned::Violation(LineViolation::TooLong { limit, dropped, head: Vec::new() })
}

fn not_json(excerpt: &str, len: usize) -> Owned {
    Owned::Violation(LineViolation::NotJson { excerpt: excerpt.into(), len })
}

#[test]
fn lf_terminated_frames_arrive_in_order() {
    let events = decode(b"{\"a\":1}\n[1,2]\n{}\n");
    assert_eq!(events, [frame(b"{\"a\":1}"), frame(b"[1,2]"), frame(b"{}")]);
}

#[test]
fn crlf_is_stripped() {
    assert_eq!(decode(b"{\"a\":1}\r\n[]\r\n"), [frame(b"{\"a\":1}"), frame(b"[]")]);
}

#[test]
fn only_one_trailing_cr_is_stripped() {
    // A lone CR in the middle is content; JSON-RPC decoding will judge it.
    assert_eq!(decode(b"{\r}\r\r\n"), [frame(b"{\r}\r")]);
}

#[test]
fn blank_and_whitespace_lines_are_skipped() {
    assert_eq!(decode(b"\n\r\n  \t \r\n{}\n\n"), [frame(b"{}")]);
}

#[test]
fn leading_whitespace_is_kept_in_the_frame() {
    assert_eq!(decode(b"  {}\n\t[]\n"), [frame(b"  {}"), frame(b"\t[]")]);
}

#[test]
fn banner_is_a_violation_not_a_frame() {
    let events = decode(b"Server v1.2 listening\n{}\n");
    assert_eq!(events, [not_json("Server v1.2 listening", 21), frame(b"{}")]);
}

#[test]
fn not_json_excerpt_is_short_printable_and_marked_when_cut() {
    let line = format!("{}\x1b[31mred\x07 {}", "x".repeat(30), "y".repeat(100));
    let events = decode(format!("{line}\n").as_bytes());
    let [Owned::Violation(LineViolation::NotJson { excerpt, len })] = events.as_slice() else {
        panic!("expected one NotJson, got {events:?}");
    };
    assert_eq!(*len, line.len());
    assert_eq!(excerpt.chars().count(), 40);
    assert!(excerpt.ends_with('…'), "{excerpt}");
    assert!(!excerpt.chars().any(char::is_control), "{excerpt:?}");
    assert!(excerpt.starts_with(&"x".repeat(30)), "{excerpt}");
}

#[test]
fn not_json_excerpt_of_invalid_utf8_is_lossy() {
    let events = decode(b"\xff\xfe oops\n");
    assert_eq!(events, [not_json("\u{FFFD}\u{FFFD} oops", 7)]);
}

#[test]
fn excerpt_of_exactly_forty_characters_is_not_cut() {
    let line = "é".repeat(40);
    let events = decode(format!("{line}\n").as_bytes());
    assert_eq!(events, [not_json(&line, 80)]);
}

#[test]
fn excerpt_of_many_multibyte_characters_is_cut() {
    let line = "😀".repeat(100);
    let events = decode(format!("{line}\n").as_bytes());
    let expected = format!("{}…", "😀".repeat(39));
    assert_eq!(events, [not_json(&expected, 400)]);
}

#[test]
fn invalid_utf8_inside_a_frame_is_delivered() {
    assert_eq!(decode(b"{\"a\":\"\xff\"}\n"), [frame(b"{\"a\":\"\xff\"}")]);
}

#[test]
fn unterminated_last_line_is_delivered_at_finish() {
    assert_eq!(decode(b"{}\n{\"last\":true}"), [frame(b"{}"), frame(b"{\"last\":true}")]);
    assert_eq!(decode(b"{}\r"), [frame(b"{}")]);
    assert_eq!(decode(b"  \t"), []);
    assert_eq!(decode(b"trailing log"), [not_json("trailing log", 12)]);
}

#[test]
fn nothing_is_delivered_before_the_newline() {
    let mut decoder = LineDecoder::new(64);
    let mut events = Vec::new();
    decoder.feed(b"{\"partial\":", &mut |e| events.push(own(e)));
    assert!(events.is_empty());
    assert_eq!(decoder.buffered(), 11);
    decoder.feed(b"1}\n", &mut |e| events.push(own(e)));
    assert_eq!(events, [frame(b"{\"partial\":1}")]);
    assert_eq!(decoder.buffered(), 0);
}

#[test]
fn line_at_the_limit_passes_and_one_past_it_is_dropped() {
    let ok = format!("{{{}}}", "a".repeat(6)); // 8 bytes
    let long = format!("{{{}}}", "a".repeat(7)); // 9 bytes
    let input = format!("{ok}\r\n{long}\r\n{ok}\n{long}\n{{}}\n");
    let whole = decode_chunks(8, &[input.as_bytes()]);
    let expected =
        [frame(ok.as_bytes()), too_long(8, 9), frame(ok.as_bytes()), too_long(8, 9), frame(b"{}")];
    assert_eq!(whole, expected);
    let bytewise: Vec<&[u8]> = input.as_bytes().chunks(1).collect();
    assert_eq!(decode_chunks(8, &bytewise), expected);
}

#[test]
fn over_long_line_is_reported_once_at_its_newline() {
    let mut decoder = LineDecoder::new(4);
    let mut events = Vec::new();
    for _ in 0..10 {
        decoder.feed(b"{\"aaaa", &mut |e| events.push(own(e)));
    }
    assert!(events.is_empty(), "reported only when the line ends");
    decoder.feed(b"\"}\r\n[]\n", &mut |e| events.push(own(e)));
    assert_eq!(events, [too_long(4, 62), frame(b"[]")]);
}

#[test]
fn over_long_unterminated_line_is_reported_at_finish() {
    assert_eq!(decode_chunks(4, &[b"{}\n{\"abc", b"def\"}"]), [frame(b"{}"), too_long(4, 10)]);
}

#[test]
fn over_long_banner_is_too_long_not_not_json() {
    assert_eq!(decode_chunks(4, &[b"hello world\n"]), [too_long(4, 11)]);
}

#[test]
fn zero_limit_drops_every_non_empty_line() {
    assert_eq!(decode_chunks(0, &[b"{}\n\n\r\n "]), [too_long(0, 2), too_long(0, 1)]);
}

#[test]
fn complete_lines_are_passed_without_copying() {
    let input = b"{}\n[1]\n";
    let mut decoder = LineDecoder::new(64);
    let mut seen = Vec::new();
    decoder.feed(input, &mut |e| {
        if let LineEvent::Frame(bytes) = e {
            seen.push(bytes.as_ptr());
        }
    });
    assert_eq!(seen, [input.as_ptr(), input[3..].as_ptr()]);
}

const STREAM: &[u8] = b"MyServer 1.0 ready\n\
    {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\n\
    \r\n\
    \n\
    {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"0123456789abcdef\"}}\n\
    \t  \n\
    [{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]\r\n\
    {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}";

#[test]
fn every_two_way_split_matches_whole() {
    const LIMIT: usize = 64;
    let whole = decode_chunks(LIMIT, &[STREAM]);
    assert_eq!(whole.len(), 5, "{whole:?}");
    assert!(matches!(whole[0], Owned::Violation(LineViolation::NotJson { .. })));
    assert_eq!(whole[2], too_long(LIMIT, 87));
    for i in 0..=STREAM.len() {
        let (a, b) = STREAM.split_at(i);
        assert_eq!(decode_chunks(LIMIT, &[a, b]), whole, "split at {i}");
    }
}

#[test]
fn too_long_keeps_the_head_however_split() {
    let long = format!("{{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":\"{}\"}}", "y".repeat(300));
    let stream = format!("{long}\r\n{{}}\nabcdef\r\n{long}");
    let stream = stream.as_bytes();
    let expected = vec![long.as_bytes()[..TOO_LONG_HEAD].to_vec(), b"abcdef".to_vec(), {
        long.as_bytes()[..TOO_LONG_HEAD].to_vec()
    }];
    assert_eq!(heads(5, &[stream]), expected);
    for i in 0..=stream.len() {
        let (a, b) = stream.split_at(i);
        assert_eq!(heads(5, &[a, b]), expected, "split at {i}");
    }
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(heads(5, &bytes), expected, "byte by byte");
}

#[test]
fn default_limit_passes_a_16_mib_line() {
    let line = format!("{{\"data\":\"{}\"}}", "A".repeat(16 * 1024 * 1024));
    let events = decode_chunks(DEFAULT_MAX_LINE, &[line.as_bytes(), b"\n"]);
    assert_eq!(events, [frame(line.as_bytes())]);
}

#[test]
fn ten_mib_line_is_dropped_with_bounded_buffering() {
    const LIMIT: usize = 1024;
    let mut decoder = LineDecoder::new(LIMIT);
    let mut events = Vec::new();
    let chunk = vec![b'x'; 64 * 1024 + 7];
    let mut sent = 0;
    decoder.feed(b"{\"big\":\"", &mut |e| events.push(own(e)));
    sent += 8;
    while sent < 10 * 1024 * 1024 {
        decoder.feed(&chunk, &mut |e| events.push(own(e)));
        sent += chunk.len();
        assert!(decoder.buffered() <= LIMIT + 1, "buffered {}", decoder.buffered());
    }
    decoder.feed(b"\"}\r\n{\"next\":1}\n", &mut |e| events.push(own(e)));
    assert_eq!(decoder.buffered(), 0);
    assert_eq!(events, [too_long(LIMIT, sent + 2), frame(b"{\"next\":1}")]);
}

#[test]
fn ten_mib_line_in_one_feed_is_dropped() {
    let mut input = vec![b'{'; 10 * 1024 * 1024];
    input.extend_from_slice(b"\n{}\n{\"tail");
    let mut decoder = LineDecoder::new(1024);
    let mut events = Vec::new();
    decoder.feed(&input, &mut |e| events.push(own(e)));
    assert_eq!(decoder.buffered(), 6);
    assert_eq!(events, [too_long(1024, 10 * 1024 * 1024), frame(b"{}")]);
}

/// Maps arbitrary bytes onto a stream dense in line endings, blanks and JSON openers.
fn interesting(bytes: &[u8]) -> Vec<u8> {
    const ALPHABET: &[u8] = b"\n\r \t{[}a\xff";
    bytes
        .iter()
        .map(|&b| if b < 128 { ALPHABET[usize::from(b) % ALPHABET.len()] } else { b })
        .collect()
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

fn chunking_is_invisible(stream: &[u8], cuts: &[usize], max_line: usize) -> TestResult {
    let whole = decode_chunks(max_line, &[stream]);
    let chunked = decode_chunks(max_line, &chunk_at(stream, cuts));
    if chunked == whole {
        TestResult::passed()
    } else {
        TestResult::error(format!("{whole:?} != {chunked:?}"))
    }
}

quickcheck! {
    fn any_chunking_of_any_stream_matches_whole(bytes: Vec<u8>, cuts: Vec<usize>, limit: u8) -> TestResult {
        chunking_is_invisible(&bytes, &cuts, usize::from(limit % 16))
    }

    fn any_chunking_of_a_line_heavy_stream_matches_whole(bytes: Vec<u8>, cuts: Vec<usize>, limit: u8) -> TestResult {
        chunking_is_invisible(&interesting(&bytes), &cuts, usize::from(limit % 16))
    }

    fn frames_never_exceed_the_limit_or_hold_newlines(bytes: Vec<u8>, limit: u8) -> bool {
        let limit = usize::from(limit % 16);
        decode_chunks(limit, &[&interesting(&bytes)]).iter().all(|e| match e {
            Owned::Frame(f) => f.len() <= limit && !f.contains(&b'\n'),
            Owned::Violation(_) => true,
        })
    }
}
