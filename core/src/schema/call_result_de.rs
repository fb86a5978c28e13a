//! Reading a `tools/call` result member by member. serde's derive puts a struct with a
//! flattened map through its buffered content for every member it does not know, and every
//! 2026-07-28 result has one (`resultType`): a few allocations and a second pass for each
//! call. Here each known member is read into its field, any other straight into `extra`.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::tools::CallToolResult;
use super::ContentBlock;

impl<'de> Deserialize<'de> for CallToolResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(ResultVisitor)
    }
}

/// A member's name: one of the fields, or another member kept in `extra`.
enum Member {
    Content,
    StructuredContent,
    IsError,
    Meta,
    Other(String),
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
                Ok(match name {
                    "content" => Member::Content,
                    "structuredContent" => Member::StructuredContent,
                    "isError" => Member::IsError,
                    "_meta" => Member::Meta,
                    other => Member::Other(other.to_owned()),
                })
            }
        }
        d.deserialize_identifier(Name)
    }
}

/// The content blocks, most often one: memory for one block first. serde's own `Vec` starts
/// at room for four, over a kilobyte, and glibc consolidated its free lists for each such
/// request (2 % of a client's time at 64 B).
struct Blocks(Vec<ContentBlock>);

impl<'de> Deserialize<'de> for Blocks {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Blocks;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sequence of content blocks")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Blocks, S::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1).clamp(1, 16));
                while let Some(block) = seq.next_element()? {
                    blocks.push(block);
                }
                Ok(Blocks(blocks))
            }
        }
        d.deserialize_seq(Each)
    }
}

struct ResultVisitor;

impl<'de> Visitor<'de> for ResultVisitor {
    type Value = CallToolResult;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("struct CallToolResult")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CallToolResult, A::Error> {
        let mut out = CallToolResult::default();
        let mut seen = [false; 4];
        let mut once = |at: usize, name: &'static str| {
            if std::mem::replace(&mut seen[at], true) {
                return Err(de::Error::duplicate_field(name));
            }
            Ok(())
        };
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Content => {
                    once(0, "content")?;
                    out.content = map.next_value::<Blocks>()?.0;
                }
                Member::StructuredContent => {
                    once(1, "structuredContent")?;
                    out.structured_content = map.next_value()?;
                }
                Member::IsError => {
                    once(2, "isError")?;
                    out.is_error = map.next_value()?;
                }
                Member::Meta => {
                    once(3, "_meta")?;
                    out.meta = map.next_value()?;
                }
                Member::Other(name) => {
                    let value: Value = map.next_value()?;
                    out.extra.insert(name, value);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_member_goes_to_its_field_and_any_other_to_extra() {
        let sent = json!({
            "resultType": "complete",
            "content": [{"type": "text", "text": "hi"}],
            "structuredContent": {"n": 1},
            "isError": false,
            "_meta": {"io.example/k": 2},
            "task": {"id": "t1"}
        });
        let text = sent.to_string();
        let read: CallToolResult = serde_json::from_str(&text).unwrap();
        assert_eq!(read.content, vec![ContentBlock::text("hi")]);
        assert_eq!(read.content.capacity(), 1, "room for the one block, no more");
        assert_eq!(read.structured_content, Some(json!({"n": 1})));
        assert_eq!(read.is_error, Some(false));
        assert_eq!(read.meta.as_ref().map(|m| m["io.example/k"].clone()), Some(json!(2)));
        assert_eq!(read.extra.len(), 2);
        assert_eq!(read.extra["resultType"], "complete");
        assert_eq!(read.extra["task"], json!({"id": "t1"}));
        assert_eq!(serde_json::to_value(&read).unwrap(), sent, "a lossless round trip");
        let from_value: CallToolResult = serde_json::from_value(sent).unwrap();
        assert_eq!(from_value, read);
    }

    #[test]
    fn absent_and_null_members_are_defaults_and_a_repeated_one_is_refused() {
        let empty: CallToolResult = serde_json::from_str("{}").unwrap();
        assert_eq!(empty, CallToolResult::default());
        let nulls: CallToolResult =
            serde_json::from_str(r#"{"isError":null,"_meta":null,"structuredContent":null}"#)
                .unwrap();
        assert_eq!(nulls, CallToolResult::default());
        let twice = serde_json::from_str::<CallToolResult>(r#"{"content":[],"content":[]}"#);
        assert!(twice.unwrap_err().to_string().contains("duplicate field `content`"));
        let not_a_map = serde_json::from_str::<CallToolResult>("[]");
        assert!(not_a_map.is_err());
        let three = r#"{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}]}"#;
        let three: CallToolResult = serde_json::from_str(three).unwrap();
        assert_eq!(three.content.len(), 3);
        let not_a_list = serde_json::from_str::<CallToolResult>(r#"{"content":{}}"#);
        assert!(not_a_list.unwrap_err().to_string().contains("a sequence of content blocks"));
    }
}
