//! Server-Sent Events: an incremental decoder and an encoder (WHATWG HTML, "event stream
//! interpretation"; MCP Streamable HTTP and legacy HTTP+SSE).
//!
//! ```text
//!            bytes ──► SseDecoder ──► Event { event_type, data, id }   at a blank line
//!                                 └──► Retry(delay)                     at a valid `retry:` line
//!                                 └──► Violation(EventTooLarge)         then skip to a blank line
//! ```
//!
//! Decoding follows the standard: line ends are CR, LF or CRLF (also split across feeds); one
//! leading UTF-8 BOM is removed, however it is chunked; `:` lines are comments; `data` lines
//! are joined with LF; an `id` holding NUL is ignored and the last event ID persists from
//! event to event; `retry` must be ASCII digits; an event with no data does not fire; the
//! default event type is `message`; an event unfinished at the end of the stream is dropped.
//!
//! Malformed UTF-8 is not an error: the standard decodes the stream with replacement, so
//! ill-formed sequences in a value become U+FFFD. Field names are compared as bytes, so a
//! malformed name is simply unknown.
//!
//! Items do not depend on how the stream is chunked, and memory is bounded by `max_event`.

use std::fmt;
use std::mem;
use std::time::Duration;

use bytes::Bytes;
use memchr::{memchr, memchr2};

/// Default bound on one event (4 MiB).
pub const DEFAULT_MAX_EVENT: usize = 4 * 1024 * 1024;

/// How many bytes of an oversized event's data its violation keeps
/// ([`SseViolation::EventTooLarge`]): as many as a too-long stdio line keeps.
pub const TOO_LARGE_HEAD: usize = crate::framing::lines::TOO_LONG_HEAD;

/// The UTF-8 byte order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Incremental, bounded decoder of one `text/event-stream` body.
///
/// Holds at most `max_event` bytes of an unfinished event (see [`SseDecoder::new`]) plus the
/// last event ID. After [`finish`](Self::finish) it can decode the next connection's stream:
/// the last event ID carries over, for `Last-Event-ID`.
#[derive(Clone, Debug)]
pub struct SseDecoder {
    max_event: usize,
    /// How much of a leading BOM has been seen; `None` once the stream start is decided.
    bom: Option<usize>,
    /// The previous feed ended in CR: a LF opening the next feed ends no line.
    pending_cr: bool,
    /// The unfinished current line, when it must be kept (never a comment or a dropped line).
    line: Vec<u8>,
    /// The rest of the current line is ignored: a comment, or a line of a dropped event.
    skipping_line: bool,
    /// Discarding lines up to the next blank line, after [`SseViolation::EventTooLarge`].
    dropping: bool,
    /// Bytes of the current event's non-comment lines so far, line ends excluded.
    event_len: usize,
    /// The data buffer: each `data` value followed by LF.
    data: Vec<u8>,
    /// The event type buffer, raw.
    event_type: Vec<u8>,
    /// The last event ID buffer, when `id_set`; else a spare allocation.
    id_buf: String,
    /// An `id` line has set `id_buf` since the last blank line.
    id_set: bool,
    /// The stream's last event ID: the buffer as of the last blank line.
    last_id: String,
    /// Holds the lossy decoding of data or event type that was not valid UTF-8.
    scratch_data: String,
    scratch_type: String,
}

/// One result of feeding bytes to an [`SseDecoder`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SseItem<'a> {
    /// An event was dispatched.
    Event(SseEvent<'a>),
    /// The server set the reconnection delay (a `retry` line of ASCII digits, in milliseconds;
    /// values beyond `u64::MAX` ms saturate).
    Retry(Duration),
    /// An event was discarded; the stream goes on after its blank line.
    Violation(SseViolation),
}

/// A dispatched event, borrowed from the decoder until the sink returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event` field, or `message` when none (or an empty one) was given.
    pub event_type: &'a str,
    /// The `data` lines joined with LF; may be empty (`data:` alone, as in MCP's priming
    /// event).
    pub data: &'a str,
    /// The last event ID at dispatch: this event's `id`, or an earlier event's. `None` when
    /// empty (never set, or cleared by an empty `id`).
    pub id: Option<&'a str>,
}

/// Why an event was discarded. The stream continues after the next blank line.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SseViolation {
    /// The event's lines (comments and line ends excluded) exceed the limit. Lines already
    /// read keep their effect (an `id` still moves the last event ID at the blank line, a
    /// `retry` was already reported); the rest, up to the blank line, is discarded.
    EventTooLarge {
        /// The decoder's `max_event`.
        limit: usize,
        /// The first bytes (at most [`TOO_LARGE_HEAD`]) of the event's data that fit within
        /// the limit: enough to read the id of the JSON-RPC message it held. The same however
        /// the stream was chunked.
        head: Vec<u8>,
    },
}

impl SseDecoder {
    /// Creates a decoder for a stream start whose events may hold `max_event` bytes.
    ///
    /// An event's size is the sum of the lengths of its lines, comments and line ends
    /// excluded; this also bounds a single line while it arrives.
    pub fn new(max_event: usize) -> Self {
        Self {
            max_event,
            bom: Some(0),
            pending_cr: false,
            line: Vec::new(),
            skipping_line: false,
            dropping: false,
            event_len: 0,
            data: Vec::new(),
            event_type: Vec::new(),
            id_buf: String::new(),
            id_set: false,
            last_id: String::new(),
            scratch_data: String::new(),
            scratch_type: String::new(),
        }
    }

    /// Feeds bytes; calls `sink` for each item, in stream order. Never fails, never panics.
    pub fn feed(&mut self, mut bytes: &[u8], sink: &mut dyn FnMut(SseItem<'_>)) {
        if let Some(seen) = self.bom {
            bytes = self.strip_bom(seen, bytes);
            if self.bom.is_some() {
                return;
            }
        }
        if self.pending_cr && !bytes.is_empty() {
            self.pending_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while let Some(pos) = memchr2(b'\n', b'\r', bytes) {
            let mut next = pos + 1;
            if bytes[pos] == b'\r' {
                match bytes.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.pending_cr = true,
                }
            }
            self.end_line(&bytes[..pos], sink);
            bytes = &bytes[next..];
        }
        self.hold(bytes, sink);
    }

    /// Ends the stream: an unfinished event is discarded (the standard's rule at EOF), and
    /// the decoder is ready for a new stream, BOM included. The last event ID is kept.
    pub fn finish(&mut self) {
        *self = Self { last_id: mem::take(&mut self.last_id), ..Self::new(self.max_event) };
    }

    /// The stream's last event ID, as of the last blank line; `None` when empty. This is the
    /// value for a reconnection's `Last-Event-ID` header.
    pub fn last_event_id(&self) -> Option<&str> {
        (!self.last_id.is_empty()).then_some(self.last_id.as_str())
    }

    /// Bytes of an unfinished event held in memory; at most `max_event`.
    pub fn buffered(&self) -> usize {
        self.line.len() + self.data.len() + self.event_type.len()
    }

    /// Matches a leading BOM byte by byte; returns the bytes after it, or all of them when
    /// the stream does not start with a BOM (the matched prefix becomes line content).
    fn strip_bom<'b>(&mut self, mut seen: usize, mut bytes: &'b [u8]) -> &'b [u8] {
        while seen < BOM.len() {
            match bytes.first() {
                None => {
                    self.bom = Some(seen);
                    return bytes;
                }
                Some(&b) if b == BOM[seen] => {
                    seen += 1;
                    bytes = &bytes[1..];
                }
                Some(_) => {
                    self.line.extend_from_slice(&BOM[..seen]);
                    break;
                }
            }
        }
        self.bom = None;
        bytes
    }

    /// Handles a line whose end was just found; `head` is its part in this feed.
    fn end_line(&mut self, head: &[u8], sink: &mut dyn FnMut(SseItem<'_>)) {
        if mem::take(&mut self.skipping_line) {
            return;
        }
        let len = self.line.len() + head.len();
        if len == 0 {
            self.dispatch(sink);
        } else if self.dropping || (self.line.is_empty() && head[0] == b':') {
            super::release(&mut self.line);
        } else if self.event_len.saturating_add(len) > self.max_event {
            let data_head = self.data_head(head);
            super::release(&mut self.line);
            self.violate(data_head, sink);
        } else {
            self.event_len += len;
            if self.line.is_empty() {
                self.field(head, sink);
            } else {
                let mut line = mem::take(&mut self.line);
                line.extend_from_slice(head);
                self.field(&line, sink);
                super::release(&mut line);
                self.line = line;
            }
        }
    }

    /// Keeps the unterminated tail of a feed, unless the line is ignored or too long.
    fn hold(&mut self, tail: &[u8], sink: &mut dyn FnMut(SseItem<'_>)) {
        if tail.is_empty() || self.skipping_line {
            return;
        }
        if self.dropping || (self.line.is_empty() && tail[0] == b':') {
            self.skipping_line = true;
        } else if self.event_len.saturating_add(self.line.len() + tail.len()) > self.max_event {
            let data_head = self.data_head(tail);
            super::release(&mut self.line);
            self.skipping_line = true;
            self.violate(data_head, sink);
        } else {
            self.line.extend_from_slice(tail);
        }
    }

    /// The start of the event's data, for the violation of the line (held part, then
    /// `rest`) that makes the event too large: the data of earlier lines, then, if this is
    /// a `data` line, the part of its value within the limit; at most [`TOO_LARGE_HEAD`].
    fn data_head(&self, rest: &[u8]) -> Vec<u8> {
        // Only as much as a head can hold is copied: the field name, a space, the head.
        let room =
            self.max_event.saturating_sub(self.event_len).min(b"data: ".len() + TOO_LARGE_HEAD);
        let line: Vec<u8> = self.line.iter().chain(rest).take(room).copied().collect();
        let mut head = self.data[..self.data.len().min(TOO_LARGE_HEAD)].to_vec();
        if let Some(value) = line.strip_prefix(b"data:") {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            head.extend_from_slice(value);
        }
        head.truncate(TOO_LARGE_HEAD);
        head
    }

    /// Reports the current event as too large and discards it up to its blank line.
    fn violate(&mut self, head: Vec<u8>, sink: &mut dyn FnMut(SseItem<'_>)) {
        self.dropping = true;
        super::release(&mut self.data);
        self.event_type.clear();
        let limit = self.max_event;
        sink(SseItem::Violation(SseViolation::EventTooLarge { limit, head }));
    }

    /// Processes one complete, non-empty, non-comment line.
    fn field(&mut self, line: &[u8], sink: &mut dyn FnMut(SseItem<'_>)) {
        let (name, value) = match memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match name {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"event" => {
                self.event_type.clear();
                self.event_type.extend_from_slice(value);
            }
            b"id" if memchr(0, value).is_none() => {
                self.id_buf.clear();
                self.id_buf.push_str(&String::from_utf8_lossy(value));
                self.id_set = true;
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let millis = value
                    .iter()
                    .fold(0u64, |n, d| n.saturating_mul(10).saturating_add(u64::from(d - b'0')));
                sink(SseItem::Retry(Duration::from_millis(millis)));
            }
            _ => {}
        }
    }

    /// A blank line: moves the last event ID, then fires the event if it has data.
    fn dispatch(&mut self, sink: &mut dyn FnMut(SseItem<'_>)) {
        if mem::take(&mut self.id_set) {
            // The old ID's allocation stays in the buffer for the next `id` line.
            mem::swap(&mut self.id_buf, &mut self.last_id);
        }
        self.event_len = 0;
        let dropped = mem::take(&mut self.dropping);
        if dropped || self.data.is_empty() {
            super::release(&mut self.data);
            self.event_type.clear();
            return;
        }
        self.data.pop(); // The data buffer ends in LF: remove that one.
        let data = utf8_lossy(&self.data, &mut self.scratch_data);
        let event_type = match &self.event_type[..] {
            [] => "message",
            raw => utf8_lossy(raw, &mut self.scratch_type),
        };
        let id = (!self.last_id.is_empty()).then_some(self.last_id.as_str());
        sink(SseItem::Event(SseEvent { event_type, data, id }));
        super::release(&mut self.data);
        self.event_type.clear();
        if self.scratch_data.capacity() > super::KEPT_BUFFER_MAX {
            self.scratch_data = String::new();
        }
    }
}

impl Default for SseDecoder {
    /// A decoder with [`DEFAULT_MAX_EVENT`].
    fn default() -> Self {
        Self::new(DEFAULT_MAX_EVENT)
    }
}

/// Why an event could not be encoded: a field that does not fit on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SseEncodeError {
    /// The event ID contains CR, LF or NUL, which a decoder would split or ignore.
    InvalidId,
    /// The event type contains CR or LF.
    InvalidEventType,
}

/// Encodes one event: an `id` line and an `event` line when given, one `data` line per line
/// of `data`, then the blank line that dispatches it.
///
/// Every event fires at the receiver, even with empty `data`. Line breaks in `data` (CR, LF or
/// CRLF) separate `data` lines, so they decode as LF; other text round-trips exactly. An
/// empty `id` clears the receiver's last event ID; an empty `event_type` means `message`.
pub fn encode_event(
    id: Option<&str>,
    event_type: Option<&str>,
    data: &str,
) -> Result<Bytes, SseEncodeError> {
    let mut out = Vec::with_capacity(data.len() + 32);
    put_id_and_type(&mut out, id, event_type)?;
    put_lines(&mut out, b"data", data.as_bytes());
    out.push(b'\n');
    Ok(Bytes::from(out))
}

/// Encodes MCP's priming event: `id` with empty data, and a `retry` delay when given, so the
/// client can resume from `id` after a disconnect. It fires an event whose data is empty.
pub fn encode_priming(id: &str, retry: Option<Duration>) -> Result<Bytes, SseEncodeError> {
    let mut out = Vec::with_capacity(id.len() + 40);
    put_id_and_type(&mut out, Some(id), None)?;
    if let Some(delay) = retry {
        put_retry(&mut out, delay);
    }
    out.extend_from_slice(b"data:\n\n");
    Ok(Bytes::from(out))
}

/// Encodes a `retry` line: the receiver's reconnection delay, in whole milliseconds (rounded
/// down, saturating at `u64::MAX`). It belongs to no event and dispatches nothing.
pub fn encode_retry(delay: Duration) -> Bytes {
    let mut out = Vec::with_capacity(32);
    put_retry(&mut out, delay);
    Bytes::from(out)
}

/// Encodes a comment (a keep-alive): one `:` line per line of `text`. Decoders ignore it.
pub fn encode_comment(text: &str) -> Bytes {
    let mut out = Vec::with_capacity(text.len() + 3);
    put_lines(&mut out, b"", text.as_bytes());
    Bytes::from(out)
}

fn put_id_and_type(
    out: &mut Vec<u8>,
    id: Option<&str>,
    event_type: Option<&str>,
) -> Result<(), SseEncodeError> {
    if let Some(id) = id {
        if id.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0)) {
            return Err(SseEncodeError::InvalidId);
        }
        put_field(out, b"id", id.as_bytes());
    }
    if let Some(event_type) = event_type {
        if memchr2(b'\n', b'\r', event_type.as_bytes()).is_some() {
            return Err(SseEncodeError::InvalidEventType);
        }
        put_field(out, b"event", event_type.as_bytes());
    }
    Ok(())
}

fn put_retry(out: &mut Vec<u8>, delay: Duration) {
    let millis = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
    put_field(out, b"retry", millis.to_string().as_bytes());
}

/// Writes one `name` field per line of `text`; CR, LF and CRLF all separate lines.
fn put_lines(out: &mut Vec<u8>, name: &[u8], mut text: &[u8]) {
    while let Some(pos) = memchr2(b'\n', b'\r', text) {
        put_field(out, name, &text[..pos]);
        let crlf = text[pos] == b'\r' && text.get(pos + 1) == Some(&b'\n');
        text = &text[pos + 1 + usize::from(crlf)..];
    }
    put_field(out, name, text);
}

/// Writes `name: value` and LF (`name:` alone when `value` is empty).
fn put_field(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(name);
    out.push(b':');
    if !value.is_empty() {
        out.push(b' ');
        out.extend_from_slice(value);
    }
    out.push(b'\n');
}

/// `bytes` as text: borrowed when valid UTF-8, else decoded with U+FFFD into `scratch`.
///
/// Validation is the decoder's main cost on large data; simdutf8 does it several times faster
/// than `std::str::from_utf8` on text that is not pure ASCII.
fn utf8_lossy<'a>(bytes: &'a [u8], scratch: &'a mut String) -> &'a str {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => {
            scratch.clear();
            scratch.push_str(&String::from_utf8_lossy(bytes));
            scratch
        }
    }
}

impl fmt::Display for SseViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EventTooLarge { limit, .. } => {
                write!(f, "event exceeds the {limit}-byte limit and was discarded")
            }
        }
    }
}

impl std::error::Error for SseViolation {}

impl fmt::Display for SseEncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidId => f.write_str("event id contains CR, LF or NUL"),
            Self::InvalidEventType => f.write_str("event type contains CR or LF"),
        }
    }
}

impl std::error::Error for SseEncodeError {}

#[cfg(test)]
mod tests;
