//! Reading a content block straight from its text. A `text` block whose `type` comes first
//! (as the SDKs write it) is read member by member into [`TextContent`], without a `Value` of
//! the block; any other block is gathered into a `Value` and read from it, as before.

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
                return text_members(map).map(|text| Ok(ContentBlock::Text(text)));
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

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Read, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Ok(ContentBlock::Unknown(Value::Array(items))))
    }
}

/// The members of a `text` block after its `type`.
fn text_members<'de, A: MapAccess<'de>>(mut map: A) -> Result<TextContent, A::Error> {
    let (mut text, mut annotations, mut meta, mut extra) = (None, None, None, Map::new());
    while let Some(key) = map.next_key::<TextKey>()? {
        match key {
            TextKey::Text => text = Some(map.next_value()?),
            TextKey::Annotations => annotations = map.next_value()?,
            TextKey::Meta => meta = map.next_value()?,
            TextKey::Type => {
                if map.next_value::<Value>()? != "text" {
                    return Err(de::Error::custom("a content block with two different types"));
                }
            }
            TextKey::Other(key) => {
                extra.insert(key, map.next_value()?);
            }
        }
    }
    let text = text.ok_or_else(|| de::Error::missing_field("text"))?;
    Ok(TextContent { text, annotations, meta, extra })
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
}
