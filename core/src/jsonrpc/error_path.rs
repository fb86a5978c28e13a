//! The member a failed typed parse stopped at, as a path (`params.items[2].name`), found by
//! one scan of the text up to serde_json's error position.
//!
//! Naming the path this way is one function for every type. Tracking it while deserializing
//! (serde_path_to_error) needs a second copy of each type's deserializer, compiled into
//! every program for every type it parses, though it runs only on failure.

use serde_json::error::Category;

/// `error`'s message led by the path of the member of `text` where it happened
/// (`content[0].text: invalid type: …`), or the bare message at the top level.
pub(crate) fn describe(text: &str, error: &serde_json::Error) -> String {
    let message = error.to_string();
    let mut at = byte_index(text, error.line(), error.column());
    // Where serde_json stops tells the member in three ways. An error about a whole container
    // (a missing field, a length) comes just after its end, where the scan has left it. A
    // container where another value belongs is refused at its opening bracket, unread. An
    // error in a value serde read ahead as a whole (tagged, untagged, flattened types) gets
    // its position only once its container has moved on: in a list past the value's `,` or
    // past the list's end; in an object at its next `,` (unread) or past its end. Any other
    // error comes just after the value it is about. Where the position cannot tell, the path
    // is one that holds the member (a value read ahead as an object's last member, that
    // object followed by a `,`, is named by the object), with one exception: a value read
    // ahead and refused as a map or a list, followed in its list by an element opening with
    // the same bracket, is named as that next element.
    let before = text[..at].trim_end_matches([' ', '\t', '\n', '\r']);
    let about_container = match message.split(' ').next() {
        // No list misses a field: this object was read ahead, as the list's last element.
        Some("missing") => !before.ends_with(']'),
        Some("invalid") => message.starts_with("invalid length"),
        _ => false,
    };
    let refused_unread = matches!(text.as_bytes().get(at), Some(b'{' | b'['))
        && ["invalid type: map", "invalid type: sequence"].iter().any(|m| message.starts_with(m));
    // At an unread `,` the object's current member is the one the error is about.
    let at_comma = text.as_bytes().get(at) == Some(&b',');
    let moved_on = before.ends_with([']', ',']) || (before.ends_with('}') && !at_comma);
    // Past a list's `,` even a missing field is the read-ahead element's.
    let steps_back = before.ends_with(',') || !about_container;
    if steps_back && !refused_unread && moved_on && error.classify() == Category::Data {
        at = before.len() - 1;
    }
    match path_at(text, at, refused_unread) {
        Some(path) => format!("{path}: {message}"),
        None => message,
    }
}

/// serde_json's position (1-based line, bytes before it on that line) as a byte index.
fn byte_index(text: &str, line: usize, column: usize) -> usize {
    let start = match line {
        0 | 1 => 0,
        n => text.match_indices('\n').nth(n - 2).map_or(text.len(), |(i, _)| i + 1),
    };
    let mut at = (start + column).min(text.len());
    // A lone surrogate escape makes serde_json skip a byte: its position may then fall
    // inside a character.
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// One open container on the way to the error.
enum Level {
    /// An object, with its current member's key once read, and whether its value has begun.
    Object { key: Option<String>, in_value: bool },
    /// An array, with its current element's index, and whether that element has begun.
    Array { index: usize, in_element: bool },
}

/// The path to the member being read at byte `at` (or, when `opens_there`, beginning
/// there), `None` at the top level.
fn path_at(text: &str, at: usize, opens_there: bool) -> Option<String> {
    let bytes = &text.as_bytes()[..at];
    let mut levels: Vec<Level> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        match byte {
            b'{' | b'[' => {
                begin_value(&mut levels);
                levels.push(if byte == b'{' {
                    Level::Object { key: None, in_value: false }
                } else {
                    Level::Array { index: 0, in_element: false }
                });
            }
            b'}' | b']' => {
                levels.pop();
            }
            b',' => match levels.last_mut() {
                Some(Level::Object { key, in_value }) => (*key, *in_value) = (None, false),
                Some(Level::Array { index, in_element }) => {
                    (*index, *in_element) = (*index + 1, false)
                }
                None => {}
            },
            b':' => {
                if let Some(Level::Object { in_value, .. }) = levels.last_mut() {
                    *in_value = true;
                }
            }
            b'"' => {
                let end = super::peek::string_end(bytes, i).unwrap_or(bytes.len());
                if let Some(Level::Object { key: key @ None, in_value: false }) = levels.last_mut()
                {
                    // Keys are valid JSON strings; a key cut short by `at` stays unnamed.
                    *key = text.get(i..end).and_then(|s| serde_json::from_str(s).ok());
                } else {
                    begin_value(&mut levels);
                }
                i = end;
                continue;
            }
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => begin_value(&mut levels),
        }
        i += 1;
    }
    if opens_there {
        begin_value(&mut levels);
    }
    let mut path = String::new();
    for level in &levels {
        match level {
            Level::Object { key: Some(key), in_value: true } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Level::Array { index, in_element: true } => path.push_str(&format!("[{index}]")),
            _ => break,
        }
    }
    (!path.is_empty()).then_some(path)
}

/// Marks the innermost array's element as begun (an object's value begins at its `:`).
fn begin_value(levels: &mut [Level]) {
    if let Some(Level::Array { in_element, .. }) = levels.last_mut() {
        *in_element = true;
    }
}

#[cfg(test)]
mod tests;
