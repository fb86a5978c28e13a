//! Reading the id of a JSON-RPC message from bytes that cannot be decoded whole.
//!
//! Two cases need it: a stdio line over the limit, of which only the first bytes are kept
//! ([`LineViolation::TooLong`](crate::framing::lines::LineViolation::TooLong)), and valid JSON
//! whose shape serde cannot read (a duplicate member). With the id, the request the message is
//! (or answers) can be answered (or failed) at once instead of waiting for a timeout.
//!
//! The scanner walks the members of the top-level object without building anything: it reads
//! each key, notes `id`, `method`, `result` and `error`, and skips every other value (strings
//! with their escapes, nested objects and arrays by depth). It stops at the first byte that is
//! not where JSON would have it, or where the bytes end. It never allocates for skipped values
//! and is linear in the bytes given.

use super::decode::parse_id;
use super::message::RequestId;

/// What the members seen at the top level of a JSON object say about the message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Peek {
    /// The `id`, when its whole value lies in the bytes and is a valid id (a string, or an
    /// integer that fits `i64`). `None` when `id` appears twice: which one counts is unknown.
    pub(crate) id: Option<RequestId>,
    /// Whether the message is a request or a response, going by its member names.
    pub(crate) kind: PeekKind,
}

/// The kind of message, going by the members seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum PeekKind {
    /// A `method` member and neither `result` nor `error`.
    Request,
    /// A `result` or `error` member and no `method`.
    Response,
    /// Neither seen (or both).
    #[default]
    Unknown,
}

/// Scans the top-level members of the JSON object at the start of `bytes`, which may be cut
/// anywhere. Never panics.
pub(crate) fn peek(bytes: &[u8]) -> Peek {
    let mut scan = Scan { cursor: Cursor { bytes, at: 0 }, ids: 0, id: None, method: false };
    let mut response = false;
    // `None` only says the bytes ended or stopped being JSON; what was seen up to there counts.
    let _ = scan.members(&mut response);
    let kind = match (scan.method, response) {
        (true, false) => PeekKind::Request,
        (false, true) => PeekKind::Response,
        _ => PeekKind::Unknown,
    };
    Peek { id: if scan.ids == 1 { scan.id } else { None }, kind }
}

struct Scan<'a> {
    cursor: Cursor<'a>,
    ids: usize,
    id: Option<RequestId>,
    method: bool,
}

impl Scan<'_> {
    fn members(&mut self, response: &mut bool) -> Option<()> {
        let c = &mut self.cursor;
        c.eat(b'{')?;
        loop {
            if c.next_byte()? != b'"' {
                return None;
            }
            let key = c.string()?;
            c.eat(b':')?;
            match key {
                br#""id""# => {
                    self.ids += 1;
                    let token = c.value()?;
                    self.id = std::str::from_utf8(token).ok().and_then(parse_id);
                }
                br#""method""# => {
                    self.method = true;
                    c.value()?;
                }
                br#""result""# | br#""error""# => {
                    *response = true;
                    c.value()?;
                }
                _ => {
                    c.value()?;
                }
            }
            c.eat(b',')?;
        }
    }
}

/// A position in bytes that may end at any point.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// The index just past the string whose opening quote is at `start`; `None` if `bytes` end
/// first.
pub(super) fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    loop {
        at += memchr::memchr2(b'"', b'\\', bytes.get(at..)?)?;
        if bytes[at] == b'"' {
            return Some(at + 1);
        }
        // A backslash and the byte it escapes.
        at += 2;
    }
}

impl<'a> Cursor<'a> {
    /// The next byte after whitespace, not consumed.
    fn next_byte(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
        self.bytes.get(self.at).copied()
    }

    /// Consumes `byte` after whitespace, or fails.
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.next_byte()? == byte).then(|| self.at += 1)
    }

    /// Consumes a string whose opening quote is at the cursor; its token, quotes included.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        self.at = string_end(self.bytes, start)?;
        self.bytes.get(start..self.at)
    }

    /// Consumes one value; its token. A scalar counts only when a delimiter follows it in the
    /// bytes, so a number cut short is never read as a smaller one.
    fn value(&mut self) -> Option<&'a [u8]> {
        match self.next_byte()? {
            b'"' => self.string(),
            b'{' | b'[' => {
                let start = self.at;
                let mut depth = 0usize;
                loop {
                    match *self.bytes.get(self.at)? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.at += 1;
                    if depth == 0 {
                        return self.bytes.get(start..self.at);
                    }
                }
            }
            _ => {
                let start = self.at;
                let len = self.bytes[start..]
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))?;
                self.at += len;
                self.bytes.get(start..self.at)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(bytes: &str) -> Option<RequestId> {
        peek(bytes.as_bytes()).id
    }

    #[test]
    fn reads_the_id_where_encoders_put_it() {
        let p = peek(br#"{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"te"#);
        assert_eq!(p, Peek { id: Some(RequestId::Number(42)), kind: PeekKind::Response });
        let p = peek(br#"{ "id" : "a\"b" , "method": "tools/call", "params": {"#);
        assert_eq!(p, Peek { id: Some(RequestId::String("a\"b".into())), kind: PeekKind::Request });
    }

    #[test]
    fn reads_the_id_after_skipped_values() {
        let line = r#"{"result":{"a":[1,{"b":"}]\"{"}],"c":null},"jsonrpc":"2.0","id":-7}"#;
        assert_eq!(id(line), Some(RequestId::Number(-7)));
    }

    #[test]
    fn a_cut_or_unusable_id_is_not_read() {
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":12"#), None, "12 may be the start of 123");
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":"ab"#), None);
        assert_eq!(id(r#"{"jsonrpc":"2.0","result":{"x":"#), None);
        assert_eq!(id(r#"{"id":null,"error":{}}"#), None);
        assert_eq!(id(r#"{"id":1.5,"result":{}}"#), None);
        assert_eq!(id(r#"{"id":1,"id":2,"method":"x"}"#), None, "duplicate id");
        assert_eq!(id(r#"[{"id":1}]"#), None);
        assert_eq!(id("x{\"id\":1,"), None);
    }

    #[test]
    fn never_panics_on_any_prefix() {
        let line = r#"{"jsonrpc":"2.0","id":"x\\y","method":"m","params":{"a":["\"",{}]}}"#;
        for end in 0..=line.len() {
            let _ = peek(&line.as_bytes()[..end]);
        }
        assert_eq!(id(line), Some(RequestId::String("x\\y".into())));
        for garbage in [&b"{\"\\"[..], b"{\"a\":\"\\", b"{\"a\":}}}", b"{\"a\":]", b"{\"\xff\":1}"]
        {
            let _ = peek(garbage);
        }
    }
}
