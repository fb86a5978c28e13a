//! Arbitrary bytes → `jsonrpc::decode`, as a frame and as a response's result. Never
//! panics; whatever decodes re-encodes to one line that decodes to the same message, also
//! when its params or result arrive pretty-printed (as from an HTTP body), which sends the
//! encoder down its compacting path.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zest_core::jsonrpc::{decode, encode_batch_into, encode_line, Frame, Message, RawJson};

fuzz_target!(|bytes: &[u8]| {
    check(bytes);
    // The same bytes as a result too, so that the fuzzer's effort goes into the raw value
    // rather than into rediscovering the envelope.
    let mut wrapped = br#"{"jsonrpc":"2.0","id":1,"result":"#.to_vec();
    wrapped.extend_from_slice(bytes);
    wrapped.push(b'}');
    check(&wrapped);
});

fn check(bytes: &[u8]) {
    match decode(bytes) {
        Ok(Frame::Single(m)) => round_trip(&m),
        Ok(Frame::Batch(items)) => {
            let good: Vec<Message> = items.into_iter().filter_map(Result::ok).collect();
            good.iter().for_each(round_trip);
            if !good.is_empty() {
                let mut line = Vec::new();
                encode_batch_into(&good, &mut line);
                let again = decode(&line).expect("an encoded batch decodes");
                assert_eq!(again, Frame::Batch(good.into_iter().map(Ok).collect()));
            }
        }
        Err(_) => {}
    }
}

fn round_trip(m: &Message) {
    one_line_round_trip(m);
    one_line_round_trip(&pretty(m));
}

/// The same message with a CRLF after the opening bracket of its params or result.
fn pretty(m: &Message) -> Message {
    let pad = |raw: &RawJson| {
        let text = raw.get();
        match text.as_bytes().first() {
            Some(b'{' | b'[') => RawJson::from_string(format!("{}\r\n{}", &text[..1], &text[1..]))
                .expect("whitespace after a bracket keeps JSON valid"),
            _ => raw.clone(),
        }
    };
    let mut m = m.clone();
    match &mut m {
        Message::Request(r) => r.params = r.params.as_ref().map(pad),
        Message::Notification(n) => n.params = n.params.as_ref().map(pad),
        Message::Response(r) => {
            if let Ok(result) = &mut r.outcome {
                *result = pad(result);
            }
        }
    }
    m
}

fn one_line_round_trip(m: &Message) {
    let line = encode_line(m);
    let newlines = line.iter().filter(|&&b| b == b'\n' || b == b'\r').count();
    assert_eq!((newlines, line.last()), (1, Some(&b'\n')), "one line: {line:?}");
    assert_eq!(decode(&line), Ok(Frame::Single(m.clone())), "line {line:?}");
}
