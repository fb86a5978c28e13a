//! [`Meta`]: the `_meta` object, read like a map, built into one only when first read.
//!
//! Nearly every `_meta` a peer sends is never read by the receiver: a 2026-07-28 request's
//! names the client and its capabilities, a result's names the server. Building each into a
//! `Map` cost a twentieth of a client's and of a server's time a call. A received `_meta` is
//! kept as its text instead, and parsed the first time it is read.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::OnceLock;

use serde::de::{self, MapAccess, Unexpected, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The name under which serde_json's own deserializers hand a value's text to a visitor that
/// asks for it (its `RawValue` protocol); any other deserializer hands over the value itself.
const RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

/// The `_meta` object reserved on params, results and many nested types.
///
/// Read and change it as the [`Map`] it derefs to (`meta.get(key)`, `meta.insert(..)`,
/// `for (key, value) in &meta`); make one with [`Meta::new`], from a map (`Meta::from(map)`,
/// `map.into()`) or from pairs (`collect()`), and take the map out with
/// [`into_map`](Meta::into_map). (Code written when `Meta` was an alias of
/// `Map<String, Value>` builds one with `Some(map.into())` where it wrote `Some(map)`.)
///
/// A `_meta` decoded by serde_json (from a message's text or from a `Value`) is kept as its
/// text until first read, or compared, printed or written (each reads it); decoding refuses
/// what the map would refuse (a value that is not an object, a lone surrogate, an
/// out-of-range number), as an error of the message that carried it.
///
/// Keys under reserved prefixes (second label `modelcontextprotocol` or `mcp`) belong to the
/// spec; implementations MUST NOT assume anything about values under them.
///
/// One pointer wide (an `Option<Meta>` too), so the many types that carry one stay small.
#[derive(Clone, Default)]
pub struct Meta(Box<Lazy>);

#[derive(Clone, Default)]
struct Lazy {
    /// The text as serde_json handed it over, until the map is built from it or changed
    /// (`None` for a `_meta` made here). Never written as it is: the map is.
    text: Option<Box<str>>,
    /// The map, built from `text` when first read.
    map: OnceLock<Map<String, Value>>,
}

impl Meta {
    /// An empty `_meta`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The map, built now if it was not.
    pub fn into_map(mut self) -> Map<String, Value> {
        self.force();
        self.0.map.take().unwrap_or_default()
    }

    /// True when `key` may be a member: false only when it is surely not one (a received
    /// text that does not contain it), without building the map.
    pub(crate) fn may_have(&self, key: &str) -> bool {
        match (&self.0.text, self.0.map.get()) {
            (Some(text), None) => text.contains(key),
            _ => self.contains_key(key),
        }
    }

    fn force(&self) -> &Map<String, Value> {
        let lazy = &*self.0;
        lazy.map.get_or_init(|| {
            // `from_text` let through only texts this parse takes.
            // serde_json vouched for the text (valid JSON), and `from_text` kept only texts
            // the map takes, so this never falls back to the empty map.
            lazy.text.as_deref().and_then(|t| serde_json::from_str(t).ok()).unwrap_or_default()
        })
    }

    /// A received `_meta` text: kept as it is when the map would surely take it, built into
    /// the map at once otherwise (so that what the map refuses is refused now, as an error of
    /// the message that carried it).
    fn from_text<E: de::Error>(text: String) -> Result<Self, E> {
        if !text.starts_with('{') {
            return Err(E::invalid_type(
                Unexpected::Other("a value that is not an object"),
                &"a map",
            ));
        }
        if !surely_parses(text.as_bytes()) {
            return serde_json::from_str::<Map<String, Value>>(&text)
                .map(Self::from)
                .map_err(E::custom);
        }
        Ok(Self(Box::new(Lazy { text: Some(text.into_boxed_str()), map: OnceLock::new() })))
    }
}

/// True when building a map of this JSON object text surely succeeds: no escape at all (a
/// `\u` may be a lone surrogate, which the map refuses and a skim does not), no number with an
/// exponent or of more than 300 digits (out of range for an `f64`), nesting well under
/// serde_json's limit of 128, every string and bracket closed. Only the text between strings
/// is read byte by byte.
fn surely_parses(text: &[u8]) -> bool {
    if memchr::memchr(b'\\', text).is_some() {
        return false;
    }
    let mut depth = 0;
    let mut rest = text;
    loop {
        let open = memchr::memchr(b'"', rest).unwrap_or(rest.len());
        if !plain_between_strings(&rest[..open], &mut depth) {
            return false;
        }
        // Without escapes, a string ends at the next quote.
        if open == rest.len() {
            return depth == 0;
        }
        let Some(close) = memchr::memchr(b'"', &rest[open + 1..]) else {
            return false; // a string left open
        };
        rest = &rest[open + 1 + close + 1..];
    }
}

/// Reads what stands between two strings: brackets (counted into `depth`) and numbers.
fn plain_between_strings(between: &[u8], depth: &mut usize) -> bool {
    const MAX_NESTING: usize = 100;
    let mut digits = 0;
    for &byte in between {
        match byte {
            b'0'..=b'9' => {
                digits += 1;
                if digits > 300 {
                    return false;
                }
                continue;
            }
            b'e' | b'E' if digits > 0 => return false,
            b'{' | b'[' => {
                *depth += 1;
                if *depth > MAX_NESTING {
                    return false;
                }
            }
            b'}' | b']' => *depth = depth.saturating_sub(1),
            _ => {}
        }
        digits = 0;
    }
    true
}

impl Deref for Meta {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        self.force()
    }
}

impl DerefMut for Meta {
    fn deref_mut(&mut self) -> &mut Map<String, Value> {
        self.force();
        // Changed from here on: the text no longer says what the map holds.
        self.0.text = None;
        self.0.map.get_mut().expect("built just above")
    }
}

impl From<Map<String, Value>> for Meta {
    fn from(map: Map<String, Value>) -> Self {
        Self(Box::new(Lazy { text: None, map: OnceLock::from(map) }))
    }
}

impl From<Meta> for Map<String, Value> {
    fn from(meta: Meta) -> Self {
        meta.into_map()
    }
}

impl FromIterator<(String, Value)> for Meta {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Self::from(Map::from_iter(iter))
    }
}

impl PartialEq for Meta {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Meta {}

impl PartialEq<Map<String, Value>> for Meta {
    fn eq(&self, other: &Map<String, Value>) -> bool {
        **self == *other
    }
}

impl PartialEq<Meta> for Map<String, Value> {
    fn eq(&self, other: &Meta) -> bool {
        *self == **other
    }
}

impl<'a> IntoIterator for &'a Meta {
    type Item = (&'a String, &'a Value);
    type IntoIter = serde_json::map::Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for Meta {
    type Item = (String, Value);
    type IntoIter = serde_json::map::IntoIter;

    fn into_iter(self) -> Self::IntoIter {
        self.into_map().into_iter()
    }
}

impl fmt::Debug for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl Serialize for Meta {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.force().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Meta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // serde_json's own deserializers hand a value's text to a visitor that asks under
        // their raw-value name; any other deserializer hands over the value itself.
        deserializer.deserialize_newtype_struct(RAW_VALUE_KEY, MetaVisitor)
    }
}

struct MetaVisitor;

impl<'de> Visitor<'de> for MetaVisitor {
    type Value = Meta;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Meta, D::Error> {
        Map::deserialize(d).map(Meta::from)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Meta, A::Error> {
        let Some(first) = access.next_key::<String>()? else {
            return Ok(Meta::new());
        };
        if first == RAW_VALUE_KEY {
            return Meta::from_text(access.next_value::<String>()?);
        }
        // A deserializer that hands over the members themselves.
        let mut map = Map::new();
        map.insert(first, access.next_value()?);
        while let Some((key, value)) = access.next_entry::<String, Value>()? {
            map.insert(key, value);
        }
        Ok(Meta::from(map))
    }
}

#[cfg(test)]
mod tests;
