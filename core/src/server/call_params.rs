//! `tools/call` params as the server reads them: in one pass, and without building the
//! `_meta` map for a tool whose handler never sees it (a typed tool: it gets its arguments).
//! Every 2026-07-28 request carries the client's info and capabilities in `_meta`; making
//! that map and dropping it unread cost a tenth of a quick call on the server.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::jsonrpc::key_search::Keys;
use crate::jsonrpc::RawJson;
use crate::schema::{
    progress_token, progress_token_of, CallToolParams, ProgressToken, PROGRESS_TOKEN_KEY,
};

/// Reads `tools/call` params; `reads_meta(name)` says whether the named tool's handler sees
/// `_meta`. The progress token is read either way.
pub(crate) fn read(
    params: Option<&RawJson>,
    reads_meta: impl Fn(&str) -> bool,
) -> Result<(CallToolParams, Option<ProgressToken>), String> {
    let text = params.map_or("{}", RawJson::get);
    let mut de = serde_json::Deserializer::from_str(text);
    let read = Seed { reads_meta }.deserialize(&mut de).and_then(|read| de.end().map(|()| read));
    read.map_err(|e| crate::jsonrpc::error_path::describe(text, &e))
}

/// The progress token's member name.
static PROGRESS_TOKEN: Keys = Keys::new(&[PROGRESS_TOKEN_KEY]);

/// `_meta` with only its progress token read.
#[derive(Deserialize)]
struct TokenOnly {
    #[serde(rename = "progressToken")]
    progress_token: Option<IgnoredOrToken>,
}

/// A progress token, or nothing for a value that cannot be one (a number with a fraction),
/// as for a `_meta` map read whole.
struct IgnoredOrToken(Option<ProgressToken>);

impl<'de> Deserialize<'de> for IgnoredOrToken {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self(progress_token_of(&Value::deserialize(d)?)))
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

struct Seed<F> {
    reads_meta: F,
}

impl<'de, F: Fn(&str) -> bool> DeserializeSeed<'de> for Seed<F> {
    type Value = (CallToolParams, Option<ProgressToken>);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: Fn(&str) -> bool> Visitor<'de> for Seed<F> {
    type Value = (CallToolParams, Option<ProgressToken>);

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
                    // Kept as text until the name is known (clients send `_meta` first).
                    meta = Some(map.next_value::<&'de RawValue>()?);
                }
                Member::Other(member) => {
                    let value: Value = map.next_value()?;
                    out.extra.insert(member, value);
                }
            }
        }
        out.name = name.ok_or_else(|| de::Error::missing_field("name"))?;
        let meta = meta.map(RawValue::get).filter(|text| *text != "null");
        let invalid = |e: serde_json::Error| de::Error::custom(format_args!("_meta: {e}"));
        let token = match meta {
            None => None,
            Some(text) if (self.reads_meta)(&out.name) => {
                out.meta = Some(serde_json::from_str(text).map_err(invalid)?);
                progress_token(out.meta.as_ref())
            }
            // An object, as a map read whole must be (a struct would also take a sequence).
            Some(text) if !text.starts_with('{') => {
                return Err(de::Error::custom("_meta: invalid type, expected a map"));
            }
            // Most calls ask for no progress: a search spares a second pass over the `_meta`.
            Some(text) if !PROGRESS_TOKEN.may_be_in(text.as_bytes()) => None,
            Some(text) => {
                let only: TokenOnly = serde_json::from_str(text).map_err(invalid)?;
                only.progress_token.and_then(|t| t.0)
            }
        };
        Ok((out, token))
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
    }

    #[test]
    fn bad_params_are_refused_with_a_path() {
        let bad_meta = RawJson::from_string(r#"{"_meta":{"progressToken":[}],"name":"t"}"#.into());
        assert!(bad_meta.is_none(), "not JSON at all: refused before");
        let not_a_map = json!({"name": "t", "_meta": [1]});
        assert!(read(Some(&raw(not_a_map.clone())), |_| true).unwrap_err().contains("_meta"));
        assert!(read(Some(&raw(not_a_map)), |_| false).unwrap_err().contains("_meta"));
        assert!(read(None, |_| true).unwrap_err().contains("missing field `name`"));
        let twice = RawJson::from_string(r#"{"name":"t","name":"u"}"#.to_owned()).unwrap();
        assert!(read(Some(&twice), |_| true).unwrap_err().contains("duplicate field `name`"));
        let bad = json!({"name": "t", "arguments": [1]});
        let why = read(Some(&raw(bad)), |_| true).unwrap_err();
        assert!(why.starts_with("arguments"), "{why}");
    }
}
