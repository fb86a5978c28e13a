//! Newline-delimited JSON-RPC framing for the stdio transport.
//!
//! Each message is one line ending in `\n` (MCP "stdio"). The decoder also accepts `\r\n`,
//! skips blank lines, reports lines that cannot be JSON (a banner or a log line printed to stdout)
//! without delivering them, and drops over-long lines without buffering them, keeping only their
//! first [`TOO_LONG_HEAD`] bytes so that the id of the message can still be read.
//!
//! ```text
//!            bytes ──► LineDecoder ──► Frame(&[u8])            one `{…}` or `[…]` line
//!                                 └──► Violation(NotJson)      banner, log line
//!                                 └──► Violation(TooLong)      longer than `max_line`
//! ```
//!
//! Events do not depend on how the stream is chunked. Whether a frame is valid JSON or UTF-8 is
//! left to [`jsonrpc::decode`](crate::jsonrpc::decode).

use std::fmt;

/// Default line limit (64 MiB), not counting the line ending.
///
/// Real tool results carry screenshots and files as base64 and run to several MiB; a limit that
/// drops them fails the call. 64 MiB passes those with room and still bounds a peer that never
/// ends its line.
pub const DEFAULT_MAX_LINE: usize = 64 * 1024 * 1024;

/// Bytes kept from the start of an over-long line, in [`LineViolation::TooLong`]: enough for
/// `{"jsonrpc":"2.0","id":…,"method":"…"` or `…,"result":` as usual encoders write them.
pub const TOO_LONG_HEAD: usize = 256;

/// Characters in a [`LineViolation::NotJson`] excerpt, ellipsis included.
const EXCERPT_CHARS: usize = 40;

/// Incremental, bounded decoder of newline-delimited frames.
///
/// Holds at most `max_line + 1` bytes of an incomplete line (the `+ 1` is a pending `\r`), and
/// [`TOO_LONG_HEAD`] bytes of a line being dropped.
#[derive(Clone, Debug)]
pub struct LineDecoder {
    max_line: usize,
    /// The incomplete line; empty while dropping.
    buf: Vec<u8>,
    /// Set while discarding a line already known to exceed `max_line`.
    dropping: Option<Dropped>,
}

/// One result of feeding bytes to a [`LineDecoder`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineEvent<'a> {
    /// One line, line ending removed, whose first non-whitespace byte is `{` or `[`.
    Frame(&'a [u8]),
    /// A line that was not delivered.
    Violation(LineViolation),
}

/// Why a line was not delivered as a frame. The stream continues at the next line.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineViolation {
    /// The first non-whitespace byte is not `{` or `[`.
    NotJson {
        /// The start of the line: at most 40 characters, lossy UTF-8, control characters
        /// replaced, ending in `…` when cut.
        excerpt: String,
        /// The line's length in bytes, line ending excluded.
        len: usize,
    },
    /// The line is longer than the limit; its bytes were discarded but for its head.
    TooLong {
        /// The decoder's `max_line`.
        limit: usize,
        /// The line's length in bytes, line ending excluded.
        dropped: usize,
        /// The line's first bytes: at most [`TOO_LONG_HEAD`], never the line ending. Enough to
        /// read the id of a message that puts it first; the rest of the message is gone.
        head: Vec<u8>,
    },
}

/// Length and head of a line being discarded.
#[derive(Clone, Debug)]
struct Dropped {
    len: usize,
    ends_in_cr: bool,
    head: Vec<u8>,
}

impl LineDecoder {
    /// Creates a decoder that drops lines longer than `max_line` bytes (line ending excluded).
    pub fn new(max_line: usize) -> Self {
        Self { max_line, buf: Vec::new(), dropping: None }
    }

    /// Feeds bytes; calls `sink` for each complete frame or violation, in order.
    ///
    /// A line lying wholly inside `bytes` while nothing is buffered is passed as a slice of
    /// `bytes`, without copying. Never fails and never panics.
    pub fn feed(&mut self, mut bytes: &[u8], sink: &mut dyn FnMut(LineEvent<'_>)) {
        while let Some(pos) = memchr::memchr(b'\n', bytes) {
            let (head, rest) = (&bytes[..pos], &bytes[pos + 1..]);
            if let Some(mut dropped) = self.dropping.take() {
                dropped.extend(head);
                sink(LineEvent::Violation(dropped.violation(self.max_line)));
            } else if self.buf.is_empty() {
                emit(self.max_line, head, sink);
            } else if self.buf.len() + head.len() > self.hold_limit() {
                let mut dropped = Dropped::of(&self.buf);
                dropped.extend(head);
                self.buf.clear();
                sink(LineEvent::Violation(dropped.violation(self.max_line)));
            } else {
                self.buf.extend_from_slice(head);
                emit(self.max_line, &self.buf, sink);
                super::release(&mut self.buf);
            }
            bytes = rest;
        }
        self.hold(bytes);
    }

    /// Ends the stream: a buffered unterminated last line is handled as if `\n` followed it.
    ///
    /// A non-blank last line is thus delivered (lenient: lose nothing) or reported. The decoder
    /// is empty afterwards and may be reused.
    pub fn finish(&mut self, sink: &mut dyn FnMut(LineEvent<'_>)) {
        if self.dropping.is_some() || !self.buf.is_empty() {
            self.feed(b"\n", sink);
        }
    }

    /// Bytes of an incomplete line held in memory; at most `max_line + 1` (the head of a line
    /// being dropped is not counted).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Bytes an incomplete line may occupy: the limit plus a possible `\r`.
    fn hold_limit(&self) -> usize {
        self.max_line.saturating_add(1)
    }

    /// Keeps the unterminated tail of a feed, or starts/continues dropping it.
    fn hold(&mut self, tail: &[u8]) {
        if let Some(dropped) = &mut self.dropping {
            dropped.extend(tail);
        } else if self.buf.len() + tail.len() > self.hold_limit() {
            let mut dropped = Dropped::of(&self.buf);
            dropped.extend(tail);
            self.dropping = Some(dropped);
            self.buf = Vec::new();
        } else {
            self.buf.extend_from_slice(tail);
        }
    }
}

impl Default for LineDecoder {
    /// A decoder with [`DEFAULT_MAX_LINE`].
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LINE)
    }
}

impl Dropped {
    fn of(bytes: &[u8]) -> Self {
        let mut dropped = Self { len: 0, ends_in_cr: false, head: Vec::new() };
        dropped.extend(bytes);
        dropped
    }

    fn extend(&mut self, bytes: &[u8]) {
        let room = TOO_LONG_HEAD.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.len = self.len.saturating_add(bytes.len());
        if let Some(&last) = bytes.last() {
            self.ends_in_cr = last == b'\r';
        }
    }

    fn violation(mut self, limit: usize) -> LineViolation {
        let dropped = self.len - usize::from(self.ends_in_cr);
        self.head.truncate(dropped);
        LineViolation::TooLong { limit, dropped, head: self.head }
    }
}

/// Classifies one complete line (`\n` already removed) and reports it to `sink`.
fn emit(max_line: usize, line: &[u8], sink: &mut dyn FnMut(LineEvent<'_>)) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > max_line {
        let head = line[..line.len().min(TOO_LONG_HEAD)].to_vec();
        let violation = LineViolation::TooLong { limit: max_line, dropped: line.len(), head };
        sink(LineEvent::Violation(violation));
        return;
    }
    match line.iter().find(|b| !b.is_ascii_whitespace()) {
        None => {}
        Some(b'{' | b'[') => sink(LineEvent::Frame(line)),
        Some(_) => sink(LineEvent::Violation(LineViolation::NotJson {
            excerpt: excerpt(line),
            len: line.len(),
        })),
    }
}

/// A short, printable excerpt of `line` that is safe to log.
fn excerpt(line: &[u8]) -> String {
    // Each char decodes from at most 4 bytes, so this prefix holds more chars than we keep.
    let prefix = &line[..line.len().min(4 * (EXCERPT_CHARS + 1))];
    let text = String::from_utf8_lossy(prefix);
    let mut chars = text.chars().map(|c| if c.is_control() { '\u{FFFD}' } else { c });
    let mut out: String = chars.by_ref().take(EXCERPT_CHARS).collect();
    if chars.next().is_some() || prefix.len() < line.len() {
        out = out.chars().take(EXCERPT_CHARS - 1).collect();
        out.push('…');
    }
    out
}

impl fmt::Display for LineViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson { excerpt, len } => {
                write!(f, "non-JSON line of {len} bytes: {excerpt:?}")
            }
            Self::TooLong { limit, dropped, .. } => {
                write!(f, "line of {dropped} bytes exceeds the {limit}-byte limit and was dropped")
            }
        }
    }
}

impl std::error::Error for LineViolation {}
