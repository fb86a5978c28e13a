//! Encoding messages compactly, without building a `serde_json::Value`.

use super::message::{Message, RawJson, RequestId};

/// Encodes one message as a stdio frame: compact JSON and a trailing `\n`.
///
/// A raw value received from elsewhere (an HTTP body, say) may hold pretty-printed JSON; its
/// insignificant whitespace is dropped so the frame never contains a raw newline.
pub fn encode_line(message: &Message) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.size_hint() + 1);
    encode_into(message, &mut out);
    out.push(b'\n');
    out
}

/// Appends a batch as one compact JSON array, with no trailing newline (a transport adds its
/// own framing: the stdio adapter its `\n`, HTTP nothing).
pub fn encode_batch_into(messages: &[Message], out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        encode_into(m, out);
    }
    out.push(b']');
}

impl Message {
    /// Appends the compact JSON of this message (no newline) to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        encode_into(self, out);
    }

    /// The compact JSON of this message (no newline).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_hint());
        encode_into(self, &mut out);
        out
    }
}

impl Message {
    /// About the encoded length: the envelope plus the raw params or result, so that encoding
    /// a large message allocates once.
    pub(crate) fn size_hint(&self) -> usize {
        let raw = match self {
            Self::Request(r) => r.params.as_ref(),
            Self::Notification(n) => n.params.as_ref(),
            Self::Response(r) => r.outcome.as_ref().ok(),
        };
        128 + raw.map_or(0, |r| r.get().len())
    }
}

fn encode_into(message: &Message, out: &mut Vec<u8>) {
    out.extend_from_slice(br#"{"jsonrpc":"2.0""#);
    match message {
        Message::Request(r) => {
            write_id(out, Some(&r.id));
            write_str_member(out, "method", &r.method);
            if let Some(p) = &r.params {
                write_raw_member(out, "params", p);
            }
        }
        Message::Notification(n) => {
            write_str_member(out, "method", &n.method);
            if let Some(p) = &n.params {
                write_raw_member(out, "params", p);
            }
        }
        Message::Response(r) => {
            match (&r.id, &r.outcome) {
                (Some(id), _) => write_id(out, Some(id)),
                // JSON-RPC 2.0 wants `"id": null` when the id could not be read.
                (None, _) => out.extend_from_slice(br#","id":null"#),
            }
            match &r.outcome {
                Ok(result) => write_raw_member(out, "result", result),
                Err(e) => {
                    out.extend_from_slice(br#","error":"#);
                    // Invariant: ErrorObject has string keys and plain values.
                    serde_json::to_writer(&mut *out, e).expect("error objects serialize");
                }
            }
        }
    }
    out.push(b'}');
}

fn write_id(out: &mut Vec<u8>, id: Option<&RequestId>) {
    out.extend_from_slice(br#","id":"#);
    match id {
        Some(RequestId::Number(n)) => {
            out.extend_from_slice(n.to_string().as_bytes());
        }
        Some(RequestId::String(s)) => write_json_str(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

fn write_str_member(out: &mut Vec<u8>, key: &str, value: &str) {
    out.push(b',');
    write_json_str(out, key);
    out.push(b':');
    write_json_str(out, value);
}

fn write_raw_member(out: &mut Vec<u8>, key: &str, value: &RawJson) {
    out.push(b',');
    write_json_str(out, key);
    out.push(b':');
    let text = value.get();
    // One vectorized pass finds the (rare) raw value that needs compacting.
    if memchr::memchr2(b'\n', b'\r', text.as_bytes()).is_some() {
        // Compacting the text, not re-serializing a `Value`, keeps every number exactly as
        // the peer wrote it, and cannot fail on numbers `f64` cannot hold.
        out.extend_from_slice(value.compact().as_bytes());
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

fn write_json_str(out: &mut Vec<u8>, s: &str) {
    // Invariant: serializing a &str into a Vec cannot fail.
    serde_json::to_writer(&mut *out, s).expect("strings serialize");
}
