//! Arbitrary bytes, cut points and a small `max_line` → `framing::lines::LineDecoder`.
//!
//! The events must not depend on the chunking (STYLE rule 14), must match a naive model that
//! splits the whole input at `\n`, and the decoder never holds more than `max_line + 1` bytes.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use zest_core::framing::lines::{LineDecoder, LineEvent, LineViolation, TOO_LONG_HEAD};

#[derive(Arbitrary, Debug)]
struct Case {
    max_line: u8,
    cuts: Vec<u16>,
    finish: bool,
    bytes: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq)]
enum Owned {
    Frame(Vec<u8>),
    Violation(LineViolation),
}

fn run(max_line: usize, chunks: &[&[u8]], finish: bool) -> Vec<Owned> {
    let mut d = LineDecoder::new(max_line);
    let mut out = Vec::new();
    let mut sink = |ev: LineEvent<'_>| {
        out.push(match ev {
            LineEvent::Frame(f) => Owned::Frame(f.to_vec()),
            LineEvent::Violation(v) => Owned::Violation(v),
        })
    };
    for chunk in chunks {
        d.feed(chunk, &mut sink);
        assert!(d.buffered() <= max_line + 1, "holds {} > {max_line} + 1", d.buffered());
    }
    if finish {
        d.finish(&mut sink);
        assert_eq!(d.buffered(), 0, "finish empties the decoder");
    }
    out
}

/// The decoder's documented behaviour, on the whole input at once. NotJson excerpts are not
/// modelled: `len` is compared, and the excerpt only for its bound.
fn model(max_line: usize, bytes: &[u8], finish: bool) -> Vec<Owned> {
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let tail = lines.pop().unwrap_or_default();
    if finish && !tail.is_empty() {
        lines.push(tail);
    }
    let mut out = Vec::new();
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > max_line {
            out.push(Owned::Violation(LineViolation::TooLong {
                limit: max_line,
                dropped: line.len(),
                head: line[..line.len().min(TOO_LONG_HEAD)].to_vec(),
            }));
            continue;
        }
        match line.iter().find(|b| !b.is_ascii_whitespace()) {
            None => {}
            Some(b'{' | b'[') => out.push(Owned::Frame(line.to_vec())),
            Some(_) => out.push(Owned::Violation(LineViolation::NotJson {
                excerpt: String::new(),
                len: line.len(),
            })),
        }
    }
    out
}

fn without_excerpts(events: &[Owned]) -> Vec<Owned> {
    events
        .iter()
        .map(|e| match e {
            Owned::Violation(LineViolation::NotJson { excerpt, len }) => {
                assert!(excerpt.chars().count() <= 40, "excerpt too long: {excerpt:?}");
                Owned::Violation(LineViolation::NotJson { excerpt: String::new(), len: *len })
            }
            other => other.clone(),
        })
        .collect()
}

fuzz_target!(|case: Case| {
    let max_line = usize::from(case.max_line % 64);
    let bytes = &case.bytes[..];
    let whole = run(max_line, &[bytes], case.finish);
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
    assert_eq!(run(max_line, &chunks, case.finish), whole, "chunks {chunks:?}");
    assert_eq!(without_excerpts(&whole), model(max_line, bytes, case.finish));
});
