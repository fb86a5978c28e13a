//! Reading a content block straight from its text. A `text` block whose `type` comes first
//! (as the SDKs write it) is read member by member into [`TextContent`], without a `Value` of
//! the block, so an error in it names its member (`content[0].text: invalid type: …`); any
//! other block is gathered into a `Value` and read from it once read whole, as before, so an
//! error in it names the block (`content[1]: …`).

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::content::{ContentBlock, TextContent};

impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Any other block is decoded once it has been read whole, so that an error in it
        // names the block, as it did when every block was read as a `Value` first.
        match d.deserialize_any(BlockVisitor)? {
            Ok(block) => Ok(block),
            Err(members) => Self::from_members(members),
        }
    }
}

/// What [`BlockVisitor`] read: a block, or (`Err`) an object's members still to decode.
type Read = Result<ContentBlock, Map<String, Value>>;

struct BlockVisitor;

impl<'de> Visitor<'de> for BlockVisitor {
    type Value = Read;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a content block")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read, A::Error> {
        let mut members = Map::new();
        if let Some(key) = map.next_key::<String>()? {
            let value: Value = map.next_value()?;
            if key == "type" && value == "text" {
                return text_members(map);
            }
            members.insert(key, value);
        }
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            members.insert(key, value);
        }
        Ok(Err(members))
    }

    // Anything but an object has no type: kept as sent.

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Read, E> {
        Ok(Ok(ContentBlock::Unknown(Value::from(v))))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Read, E> {
        Ok(Ok(ContentBlock::Unknown(Value::from(v))))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Read, E> {
        Ok(Ok(ContentBlock::Unknown(Value::from(v))))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Read, E> {
        Ok(Ok(ContentBlock::Unknown(Value::from(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Read, E> {
        Ok(Ok(ContentBlock::Unknown(Value::from(v))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Read, E> {
        Ok(Ok(ContentBlock::Unknown(Value::from(v))))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Read, E> {
        Ok(Ok(ContentBlock::Unknown(Value::Null)))
    }

    fn visit_none<E: de::Error>(self) -> Result<Read, E> {
        Ok(Ok(ContentBlock::Unknown(Value::Null)))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Read, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Ok(ContentBlock::Unknown(Value::Array(items))))
    }
}

/// The members of a `text` block after its `type`. Should a later `type` name another kind
/// (the last one counts, as when every block was read as a `Value`), the members read so far
/// and the rest are gathered to be decoded as that kind.
fn text_members<'de, A: MapAccess<'de>>(mut map: A) -> Result<Read, A::Error> {
    let (mut text, mut block) = (None, TextContent::default());
    while let Some(key) = map.next_key::<TextKey>()? {
        match key {
            TextKey::Text => text = Some(map.next_value()?),
            TextKey::Annotations => block.annotations = map.next_value()?,
            TextKey::Meta => block.meta = map.next_value()?,
            TextKey::Type => {
                let kind: Value = map.next_value()?;
                if kind != "text" {
                    let mut members = members_read(text, block).map_err(de::Error::custom)?;
                    members.insert("type".to_owned(), kind);
                    while let Some((key, value)) = map.next_entry::<String, Value>()? {
                        members.insert(key, value);
                    }
                    return Ok(Err(members));
                }
            }
            TextKey::Other(key) => {
                block.extra.insert(key, map.next_value()?);
            }
        }
    }
    block.text = text.ok_or_else(|| de::Error::missing_field("text"))?;
    Ok(Ok(ContentBlock::Text(block)))
}

/// The members of a text block read so far, as JSON again.
fn members_read(
    text: Option<String>,
    block: TextContent,
) -> Result<Map<String, Value>, serde_json::Error> {
    let mut members = block.extra;
    if let Some(text) = text {
        members.insert("text".to_owned(), Value::String(text));
    }
    if let Some(annotations) = block.annotations {
        members.insert("annotations".to_owned(), serde_json::to_value(annotations)?);
    }
    if let Some(meta) = block.meta {
        members.insert("_meta".to_owned(), Value::Object(meta));
    }
    Ok(members)
}

/// A member name of a text block.
enum TextKey {
    Text,
    Annotations,
    Meta,
    Type,
    Other(String),
}

impl<'de> Deserialize<'de> for TextKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_identifier(TextKeyVisitor)
    }
}

struct TextKeyVisitor;

impl Visitor<'_> for TextKeyVisitor {
    type Value = TextKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<TextKey, E> {
        Ok(match key {
            "text" => TextKey::Text,
            "annotations" => TextKey::Annotations,
            "_meta" => TextKey::Meta,
            "type" => TextKey::Type,
            other => TextKey::Other(other.to_owned()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ContentBlock, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The block as every block was read before: a `Value` first, then its members.
    fn read_as_value(text: &str) -> ContentBlock {
        match serde_json::from_str::<Value>(text).unwrap() {
            Value::Object(members) => ContentBlock::from_members::<serde_json::Error>(members),
            other => Ok(ContentBlock::Unknown(other)),
        }
        .unwrap()
    }

    #[test]
    fn a_text_block_reads_as_it_did_through_a_value() {
        for text in [
            r#"{"type":"text","text":"hi"}"#,
            r#"{"type":"text","text":"hi","annotations":null,"_meta":{"a":1},"x":[1]}"#,
            r#"{"type":"text","annotations":{"priority":0.5},"text":"hi","type":"text"}"#,
            r#"{"text":"hi","type":"text","x":{}}"#,
            r#"{"type":"image","data":"AA==","mimeType":"image/png"}"#,
            r#"{"type":"video","url":"u"}"#,
            r#"{"no":"type"}"#,
            r#""a string""#,
            "[1,{}]",
            "null",
            "3",
        ] {
            assert_eq!(read(text).unwrap(), read_as_value(text), "for {text}");
        }
        let ContentBlock::Text(block) = read(r#"{"type":"text","text":"hi","x":[1]}"#).unwrap()
        else {
            panic!("not a text block");
        };
        assert_eq!(block.extra, Map::from_iter([("x".to_owned(), Value::from(vec![1]))]));
    }

    #[test]
    fn a_text_block_that_is_not_one_is_refused() {
        assert!(read(r#"{"type":"text"}"#).is_err());
        assert!(read(r#"{"type":"text","text":5}"#).is_err());
        assert!(read(r#"{"type":"text","text":"a","type":"image"}"#).is_err());
    }

    #[test]
    fn the_last_type_of_a_block_is_the_one_that_counts() {
        for text in [
            r#"{"type":"text","text":"a","annotations":{"priority":1},"x":2,"type":"video"}"#,
            r#"{"type":"text","text":"a","type":5}"#,
            r#"{"type":"text","_meta":{"m":1},"type":"image","data":"AA==","mimeType":"i/p"}"#,
        ] {
            assert_eq!(read(text).unwrap(), read_as_value(text), "for {text}");
        }
        assert!(matches!(read(r#"{"type":"text","type":"video"}"#), Ok(ContentBlock::Unknown(_))));
    }

    #[test]
    fn an_error_names_the_member_of_a_text_block_and_the_whole_of_any_other() {
        use crate::jsonrpc::error_path::describe;
        let path = |text: &str| {
            let error = serde_json::from_str::<crate::schema::CallToolResult>(text).unwrap_err();
            describe(text, &error)
        };
        assert!(path(r#"{"content":[{"type":"text","text":5}]}"#).starts_with("content[0].text: "));
        assert!(path(r#"{"content":[{"text":5,"type":"text"}]}"#).starts_with("content[0]: "));
        assert!(path(r#"{"content":[{"type":"image","data":5}]}"#).starts_with("content[0]: "));
    }
}
