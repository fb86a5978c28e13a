//! Arbitrary bytes → `jsonrpc::decode`. Never panics; whatever decodes re-encodes to one line
//! that decodes to the same message.
#![no_main]

use libfuzzer_sys::fuzz_target;
use zest_core::jsonrpc::{decode, encode_batch_into, encode_line, Frame, Message};

fuzz_target!(|bytes: &[u8]| {
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
});

fn round_trip(m: &Message) {
    let line = encode_line(m);
    let newlines = line.iter().filter(|&&b| b == b'\n' || b == b'\r').count();
    assert_eq!((newlines, line.last()), (1, Some(&b'\n')), "one line: {line:?}");
    assert_eq!(decode(&line), Ok(Frame::Single(m.clone())), "line {line:?}");
}
