//! A [`RawValue`] view of a text zest already knows is valid JSON, without reading it again.
//!
//! A [`RawJson`](super::RawJson) keeps its text as a `String` (so that a large one's buffer
//! can be reused) and is serialized as a `RawValue` over that text. serde_json's public ways
//! to make a `RawValue` of a text parse the whole text: for a 1 MiB result that is a tenth of
//! a server's time a call. serde_json also builds a `RawValue` from a map holding one entry
//! under its raw-value key (the protocol its own deserializer speaks) and takes that entry's
//! text as it is. The key is serde_json's private name, so the route is tried once per
//! process on a small text ([`route_works`]); where it fails (a later serde_json), a text is
//! parsed each time it is serialized. A test below fails when the route stops working, so
//! the loss does not go unnoticed.
//!
//! What the route skips is a check, not a safety guarantee zest needs: core has no unsafe
//! code that relies on a `RawValue` being valid (serde_json's `from_string_unchecked` is
//! `unsafe` for code that does, and core forbids `unsafe`). Text that is not JSON would be
//! written to the peer as it is, so every `RawJson` holds text serde_json read or wrote, or
//! such texts joined at an object's `{` (`RawJson::with_leading_text`); debug builds, every
//! test among them, parse each such text once when it is made and panic if it is not JSON.

use std::sync::OnceLock;

use serde::de::value::{BorrowedStrDeserializer, Error, MapDeserializer};
use serde::Deserialize;
use serde_json::value::RawValue;

/// serde_json's key for a raw value inside its own deserializer protocol.
const RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

/// `text`, which was checked when its `RawJson` was made, as a borrowed `RawValue`: not read
/// where the route works.
pub(crate) fn trusted(text: &str) -> &RawValue {
    if route_works() {
        borrowed_by_key(text).expect("the raw-value route worked on the probe")
    } else {
        serde_json::from_str(text).expect("a RawJson holds valid JSON")
    }
}

/// Panics, in debug builds only, when `text` is not one JSON value.
pub(crate) fn debug_assert_json(text: &str) {
    if cfg!(debug_assertions) {
        let parsed = serde_json::from_str::<serde::de::IgnoredAny>(text);
        assert!(parsed.is_ok(), "not JSON, and about to be sent as JSON: {text:.200}");
    }
}

/// Whether serde_json takes a text by its raw-value key; tried once per process.
fn route_works() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| borrowed_by_key("[1,{}]").is_ok_and(|raw| raw.get() == "[1,{}]"))
}

fn borrowed_by_key(text: &str) -> Result<&RawValue, Error> {
    let entry = (BorrowedStrDeserializer::new(RAW_VALUE_KEY), BorrowedStrDeserializer::new(text));
    <&RawValue>::deserialize(MapDeserializer::<_, Error>::new(std::iter::once(entry)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_json_takes_a_text_by_its_raw_value_key() {
        assert!(route_works(), "serde_json no longer takes a text by {RAW_VALUE_KEY}");
    }

    #[test]
    fn the_text_is_borrowed_not_read_or_copied() {
        // Not JSON: only a route that does not read the text takes it.
        let text = "not read";
        let raw = borrowed_by_key(text).unwrap();
        assert_eq!(raw.get(), "not read");
        assert_eq!(raw.get().as_ptr(), text.as_ptr());
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "not JSON")]
    fn text_that_is_not_json_is_caught_in_debug_builds() {
        debug_assert_json("{\"a\":");
    }

    #[test]
    fn valid_text_comes_back_as_it_was() {
        for text in ["{}", "{\"a\":[1,\"\\n\"]}", "\"é\"", "null"] {
            assert_eq!(trusted(text).get(), text);
            assert_eq!(serde_json::to_string(trusted(text)).unwrap(), text);
        }
    }
}
