//! Whether a JSON text may name a member: a search for `"key"` (and for a `\u` escape, which
//! could spell one) instead of a JSON pass, which costs far more over a large text. False
//! means no member at any depth has the name; true means it may.
//!
//! A short text (a request's params with their `_meta`, a result) is searched key by key
//! with searchers built once per set of keys ([`Keys`], a `static` each): dozens of quotes in
//! a few hundred bytes made stopping at each quote cost more. A long one (a large argument)
//! gets one pass that stops only at quotes and backslashes.

use std::sync::OnceLock;

use memchr::memmem::Finder;

/// Texts up to this size are searched key by key with [`Keys`]' searchers (longer ones too,
/// past [`QUOTES_READ_ONE_BY_ONE`] quotes).
const SHORT_TEXT: usize = 4096;

/// How many `"` and `\` the one-pass search looks at before it searches for each key on its
/// own: one SIMD pass a key then costs less than comparing at every quote.
const QUOTES_READ_ONE_BY_ONE: usize = 4096;

/// A fixed set of member names, with a searcher for each quoted name built on first use.
pub(crate) struct Keys {
    names: &'static [&'static str],
    finders: OnceLock<Box<[Finder<'static>]>>,
}

impl Keys {
    /// The set of `names`.
    pub(crate) const fn new(names: &'static [&'static str]) -> Self {
        Self { names, finders: OnceLock::new() }
    }

    /// Whether `text` may name one of the keys.
    pub(crate) fn may_be_in(&self, text: &[u8]) -> bool {
        if text.len() > SHORT_TEXT {
            if let Some(found) = by_quotes(text, self.names) {
                return found;
            }
        }
        let finders = self.finders.get_or_init(|| {
            // A name JSON could spell with another escape than `\u` (`\/`) would be missed.
            let plain = |name: &&str| !name.contains(['"', '\\', '/']);
            debug_assert!(self.names.iter().all(plain), "names without escapable characters");
            let quoted = |name: &&str| Finder::new(format!("\"{name}\"").as_bytes()).into_owned();
            self.names.iter().map(quoted).collect()
        });
        finders.iter().any(|f| f.find(text).is_some()) || has_unicode_escape(text)
    }
}

/// A fixed byte string searched for with a searcher built on first use (building one for
/// every search cost as much as the search).
pub(crate) struct Needle {
    text: &'static str,
    finder: OnceLock<Finder<'static>>,
}

impl Needle {
    /// The needle `text`.
    pub(crate) const fn new(text: &'static str) -> Self {
        Self { text, finder: OnceLock::new() }
    }

    /// Whether `haystack` contains it.
    pub(crate) fn is_in(&self, haystack: &[u8]) -> bool {
        let finder = self.finder.get_or_init(|| Finder::new(self.text.as_bytes()));
        finder.find(haystack).is_some()
    }
}

/// Whether `text` has a `\u` escape.
fn has_unicode_escape(text: &[u8]) -> bool {
    memchr::memchr_iter(b'\\', text).any(|at| text.get(at + 1) == Some(&b'u'))
}

/// Whether `text` may name one of `keys`, in one pass: memchr finds each `"` and `\` with
/// SIMD, and only what follows them is compared. A text with many of them (structured JSON
/// rather than one large string) is searched key by key instead, past
/// [`QUOTES_READ_ONE_BY_ONE`] of them, so no text costs more than that.
pub(crate) fn may_name_any(text: &[u8], keys: &[&str]) -> bool {
    by_quotes(text, keys).unwrap_or_else(|| search_each(text, keys))
}

/// The one-pass search of [`may_name_any`]; `None` past [`QUOTES_READ_ONE_BY_ONE`] quotes and
/// backslashes, for the caller to search key by key.
fn by_quotes(text: &[u8], keys: &[&str]) -> Option<bool> {
    for (seen, at) in memchr::memchr2_iter(b'"', b'\\', text).enumerate() {
        if seen == QUOTES_READ_ONE_BY_ONE {
            return None;
        }
        let after = &text[at + 1..];
        let found = match text[at] {
            b'\\' => after.first() == Some(&b'u'),
            // The closing quote and the first byte first: most quotes fail them, and a call
            // to `memcmp` for each quote and key cost 3 % of a server at 64 B.
            _ => keys.iter().any(|key| {
                let key = key.as_bytes();
                after.get(key.len()) == Some(&b'"')
                    && key.first().is_none_or(|first| after.first() == Some(first))
                    && &after[..key.len()] == key
            }),
        };
        if found {
            return Some(true);
        }
    }
    Some(false)
}

/// Whether `"key"` for any of `keys`, or a `\u` escape, is in the long `text`: one SIMD
/// search a key (keys known only now: [`Keys`] keeps its searchers).
fn search_each(text: &[u8], keys: &[&str]) -> bool {
    let found = |key: &&str| memchr::memmem::find(text, format!("\"{key}\"").as_bytes()).is_some();
    keys.iter().any(found) || has_unicode_escape(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both searches, over `text` as it is and padded past [`SHORT_TEXT`].
    fn both(text: &str, names: &'static [&'static str]) -> bool {
        let keys = Keys::new(names);
        let padded = format!(r#"{{"pad":"{}","in":{text}}}"#, "p".repeat(SHORT_TEXT));
        let short = keys.may_be_in(text.as_bytes());
        assert_eq!(short, may_name_any(text.as_bytes(), names), "{text}");
        assert_eq!(short, keys.may_be_in(padded.as_bytes()), "{text}, padded");
        short
    }

    #[test]
    fn a_needle_is_found_anywhere_and_only_where_it_is() {
        static NEEDLE: Needle = Needle::new("input_required");
        assert!(NEEDLE.is_in(br#"{"resultType":"input_required"}"#));
        assert!(!NEEDLE.is_in(br#"{"resultType":"input_require"}"#));
        assert!(NEEDLE.is_in(format!("{}input_required", "x".repeat(5000)).as_bytes()));
    }

    #[test]
    fn a_key_is_found_at_any_depth_or_through_an_escape_by_either_search() {
        assert!(both(r#"{"a":1,"_meta":{}}"#, &["resultType", "_meta"]));
        assert!(both(r#"{"a":{"b":[{"resultType":1}]}}"#, &["_meta", "resultType"]));
        assert!(both(r#"{"_m\u0065ta":1}"#, &["_meta"]));
        assert!(!both(r#"{"a":"x_meta","b":"x_meta\"","metas":1}"#, &["_meta"]));
        assert!(!both(r#"{"text":"\\\"\n"}"#, &["_meta"]));
        assert!(both(r#"{"xmeta":1,"_metb":2,"_meta":3}"#, &["_meta"]));
        assert!(!both(r#"{"xmeta":1,"_metb":2,"_metax":3}"#, &["_meta"]));
        assert!(!both(
            r#"{"inputResponse":1,"requestStates":2}"#,
            &["inputResponses", "requestState"]
        ));
        assert!(both(
            r#"{"_meta":{"k":1},"requestState":"s"}"#,
            &["inputResponses", "requestState"]
        ));
        assert!(both(r#"{"a":""}"#, &[""]));
        assert!(!both("{}", &[]));
    }

    #[test]
    fn a_key_after_a_long_string_is_found() {
        let long = "x".repeat(8192);
        let found = |text: String, keys| may_name_any(text.as_bytes(), keys);
        assert!(found(format!(r#"{{"a":"{long}","_meta":1}}"#), &["x", "_meta"]));
        assert!(found(format!(r#"{{"a":"{long}\u0041"}}"#), &["x"]));
        assert!(!found(format!(r#"{{"a":"{long}_meta","metas":1}}"#), &["_meta", "x"]));
    }

    #[test]
    fn a_key_past_many_quotes_is_still_found() {
        // More quotes than are compared one by one: the rest is searched key by key.
        let many = r#""s","#.repeat(3000);
        static KEYS: Keys = Keys::new(&["x", "_meta"]);
        let found = |text: String, keys| {
            let any = may_name_any(text.as_bytes(), keys);
            // A `Keys` set searches such a text with its own searchers: the same answers.
            if keys == KEYS.names {
                assert_eq!(KEYS.may_be_in(text.as_bytes()), any, "{text}");
            }
            any
        };
        assert!(found(format!(r#"{{"a":[{many}"t"],"_meta":1}}"#), &["x", "_meta"]));
        assert!(found(format!(r#"{{"a":[{many}"\u0041"]}}"#), &["x"]));
        assert!(!found(format!(r#"{{"a":[{many}"t"],"meta":1}}"#), &["x", "_meta"]));
    }
}
