//! `tools/call` params as the server reads them: in one pass, and without building the
//! `_meta` map for a tool whose handler never sees it (a typed tool: it gets its arguments).
//! Every 2026-07-28 request carries the client's info and capabilities in `_meta`; making
//! that map and dropping it unread cost a tenth of a quick call on the server.
//!
//! For such a tool the `_meta` is checked as JSON and as an object, and only its progress
//! token is read (the last, if named twice, as a map read whole keeps): a number past `f64`
//! or a lone surrogate escape elsewhere in it, which a map refuses, passes unread.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::jsonrpc::key_search::Keys;
use crate::jsonrpc::RawJson;
use crate::schema::{
    progress_token, progress_token_of, CallToolParams, ProgressToken, PROGRESS_TOKEN_KEY,
};

/// Reads `tools/call` params; `reads_meta(name)` says whether the named tool's handler sees
/// `_meta`. The progress token is read either way. Errors are the derived `Deserialize`'s,
/// led by the failing member's path.
pub(crate) fn read(
    params: Option<&RawJson>,
    reads_meta: impl Fn(&str) -> bool,
) -> Result<(CallToolParams, Option<ProgressToken>), String> {
    let text = params.map_or("{}", RawJson::get);
    let mut de = serde_json::Deserializer::from_str(text);
    let read = Params.deserialize(&mut de).and_then(|read| de.end().map(|()| read));
    let (mut params, meta) = read.map_err(|e| crate::jsonrpc::error_path::describe(text, &e))?;
    let meta = meta.map(RawValue::get).filter(|text| *text != "null");
    let token = match meta {
        None => None,
        Some(meta) if reads_meta(&params.name) => match serde_json::from_str(meta) {
            Ok(map) => {
                params.meta = Some(map);
                progress_token(params.meta.as_ref())
            }
            Err(e) => return Err(derived_error(text, &e)),
        },
        // Most calls ask for no progress: a search spares a second pass over the `_meta`.
        Some(meta) if !PROGRESS_TOKEN.may_be_in(meta.as_bytes()) => {
            if !meta.starts_with('{') {
                return Err(derived_error(text, &"not an object"));
            }
            None
        }
        Some(meta) => match serde_json::from_str::<TokenOnly>(meta) {
            Ok(only) => only.0,
            Err(e) => return Err(derived_error(text, &e)),
        },
    };
    Ok((params, token))
}

/// The error the derived `Deserialize` gives for params whose `_meta` failed (a second
/// parse, on this rare path only, for its message and path); `why` should it pass.
fn derived_error(text: &str, why: &dyn fmt::Display) -> String {
    match serde_json::from_str::<CallToolParams>(text) {
        Err(e) => crate::jsonrpc::error_path::describe(text, &e),
        Ok(_) => format!("_meta: {why}"),
    }
}

/// The progress token's member name.
pub(super) static PROGRESS_TOKEN: Keys = Keys::new(&[PROGRESS_TOKEN_KEY]);

/// `_meta`, an object, with only its progress token read: the last one, as a map keeps.
pub(super) struct TokenOnly(pub(super) Option<ProgressToken>);

impl<'de> Deserialize<'de> for TokenOnly {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = TokenOnly;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TokenOnly, A::Error> {
                let mut token = None;
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::ProgressToken => {
                            token = progress_token_of(&map.next_value::<Value>()?);
                        }
                        Key::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(TokenOnly(token))
            }
        }
        d.deserialize_map(Members)
    }
}

/// A `_meta` member's name, as far as the token goes.
enum Key {
    ProgressToken,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
                Ok(if name == PROGRESS_TOKEN_KEY { Key::ProgressToken } else { Key::Other })
            }
        }
        d.deserialize_identifier(Name)
    }
}

/// A member's name: one of the params' own, or another kept in `extra` (read without a
/// copy of the known names).
enum Member {
    Name,
    Arguments,
    Meta,
    Other(String),
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Names;
        impl Visitor<'_> for Names {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
                Ok(match name {
                    "name" => Member::Name,
                    "arguments" => Member::Arguments,
                    "_meta" => Member::Meta,
                    other => Member::Other(other.to_owned()),
                })
            }
        }
        d.deserialize_identifier(Names)
    }
}

/// The params with `_meta` kept as text (clients send it first, before the name that says
/// whether it is read).
struct Params;

impl<'de> DeserializeSeed<'de> for Params {
    type Value = (CallToolParams, Option<&'de RawValue>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Params {
    type Value = (CallToolParams, Option<&'de RawValue>);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct CallToolParams")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = CallToolParams::default();
        let (mut name, mut meta, mut seen) = (None::<String>, None, [false; 3]);
        let mut once = |at: usize, field: &'static str| {
            if std::mem::replace(&mut seen[at], true) {
                return Err(de::Error::duplicate_field(field));
            }
            Ok(())
        };
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Name => {
                    once(0, "name")?;
                    name = Some(map.next_value()?);
                }
                Member::Arguments => {
                    once(1, "arguments")?;
                    out.arguments = map.next_value()?;
                }
                Member::Meta => {
                    once(2, "_meta")?;
                    meta = Some(map.next_value::<&'de RawValue>()?);
                }
                Member::Other(member) => {
                    let value: Value = map.next_value()?;
                    out.extra.insert(member, value);
                }
            }
        }
        out.name = name.ok_or_else(|| de::Error::missing_field("name"))?;
        Ok((out, meta))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn raw(value: Value) -> RawJson {
        RawJson::from(value)
    }

    #[test]
    fn a_tool_that_reads_meta_gets_the_params_as_the_derive_reads_them() {
        let sent = json!({"name": "t", "arguments": {"a": 1}, "_meta": {"progressToken": "p",
            "io.example/k": [1]}, "task": {"ttl": 5}});
        let (params, token) = read(Some(&raw(sent.clone())), |_| true).unwrap();
        assert_eq!(params, serde_json::from_value::<CallToolParams>(sent).unwrap());
        assert_eq!(token, Some(ProgressToken::from("p")));
    }

    #[test]
    fn a_tool_that_does_not_gets_no_meta_but_its_progress_token_is_read() {
        let sent = json!({"name": "t", "arguments": {"a": 1}, "_meta": {"progressToken": 7,
            "io.example/k": {"deep": [1, 2]}}});
        let (params, token) = read(Some(&raw(sent)), |name| name != "t").unwrap();
        assert_eq!(params.meta, None);
        assert_eq!(params.arguments.unwrap()["a"], 1);
        assert_eq!(token, Some(ProgressToken::Number(7)));
        let fraction = json!({"name": "t", "_meta": {"progressToken": 1.5}});
        assert_eq!(read(Some(&raw(fraction)), |_| false).unwrap().1, None);
        // Named twice, the last one counts, as in a map read whole.
        let twice = r#"{"name":"t","_meta":{"progressToken":1,"progressToken":2}}"#;
        let twice = RawJson::from_string(twice.to_owned()).unwrap();
        assert_eq!(read(Some(&twice), |_| false).unwrap().1, Some(ProgressToken::Number(2)));
        assert_eq!(read(Some(&twice), |_| true).unwrap().1, Some(ProgressToken::Number(2)));
    }

    #[test]
    fn bad_params_are_refused_as_the_derive_refuses_them() {
        let derived = |text: &str| {
            let e = serde_json::from_str::<CallToolParams>(text).unwrap_err();
            crate::jsonrpc::error_path::describe(text, &e)
        };
        for text in [r#"{"_meta":[1],"name":"t"}"#, r#"{"_meta":{"a":1e400},"name":"t"}"#] {
            let bad = RawJson::from_string(text.to_owned()).unwrap();
            let why = read(Some(&bad), |_| true).unwrap_err();
            assert_eq!(why, derived(text));
            assert!(why.starts_with("_meta"), "{why}");
        }
        let not_a_map = RawJson::from_string(r#"{"_meta":[1],"name":"t"}"#.into()).unwrap();
        let why = read(Some(&not_a_map), |_| false).unwrap_err();
        assert_eq!(why, derived(not_a_map.get()));
        assert!(read(None, |_| true).unwrap_err().contains("missing field `name`"));
        let twice = RawJson::from_string(r#"{"name":"t","name":"u"}"#.to_owned()).unwrap();
        assert!(read(Some(&twice), |_| true).unwrap_err().contains("duplicate field `name`"));
        let bad = json!({"name": "t", "arguments": [1]});
        let why = read(Some(&raw(bad)), |_| true).unwrap_err();
        assert!(why.starts_with("arguments"), "{why}");
    }
}
