//! Constructors for values people otherwise build field by field: call params, sampling
//! results, tool titles and annotations, image and audio content, completion values.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{
    AudioContent, CallToolParams, CompleteResult, Completion, ContentBlock, CreateMessageResult,
    ImageContent, Role, SamplingContent, StopReason, Tool, ToolAnnotations,
};

impl CallToolParams {
    /// Params to call tool `name` with `arguments`: anything that serializes to a JSON
    /// object (`json!({...})`, a struct, a map), or `()`/`Value::Null` for none.
    ///
    /// # Panics
    ///
    /// When `arguments` serializes to something else (a string, a number, an array): MCP
    /// arguments are always an object, and passing another shape is a bug in the caller.
    pub fn new(name: impl Into<String>, arguments: impl Serialize) -> Self {
        let name = name.into();
        let arguments = match serde_json::to_value(arguments) {
            Ok(Value::Object(map)) => Some(map),
            Ok(Value::Null) => None,
            Ok(other) => panic!("arguments of tool {name:?} must be a JSON object, not {other}"),
            Err(e) => panic!("arguments of tool {name:?} do not serialize: {e}"),
        };
        Self { name, arguments, ..Self::default() }
    }
}

impl CreateMessageResult {
    /// The assistant's text answer from `model`, ended by `endTurn`.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: SamplingContent::text(text).into(),
            model: model.into(),
            stop_reason: Some(StopReason::from("endTurn")),
            meta: None,
            extra: Map::new(),
        }
    }
}

impl Tool {
    /// Sets the display name (2025-06-18+).
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the behaviour hints.
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
}

impl ToolAnnotations {
    /// No hints: clients assume the defaults (not read-only, destructive, not idempotent,
    /// open world).
    pub fn new() -> Self {
        Self::default()
    }

    /// The tool does not modify its environment.
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.read_only_hint = Some(true);
        self
    }

    /// Whether the tool may destroy, not just add (meaningful when not read-only).
    #[must_use]
    pub fn destructive(mut self, destructive: bool) -> Self {
        self.destructive_hint = Some(destructive);
        self
    }

    /// Repeating a call with the same arguments has no further effect.
    #[must_use]
    pub fn idempotent(mut self) -> Self {
        self.idempotent_hint = Some(true);
        self
    }

    /// Whether the tool reaches an open world of external entities (web search) or a closed
    /// one (a local memory).
    #[must_use]
    pub fn open_world(mut self, open: bool) -> Self {
        self.open_world_hint = Some(open);
        self
    }
}

impl ImageContent {
    /// An image: base64-encoded `data` of MIME type `mime_type` (`image/png`, …).
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self { data: data.into(), mime_type: mime_type.into(), ..Self::default() }
    }
}

impl AudioContent {
    /// Audio: base64-encoded `data` of MIME type `mime_type` (`audio/wav`, …).
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self { data: data.into(), mime_type: mime_type.into(), ..Self::default() }
    }
}

impl ContentBlock {
    /// An image block; see [`ImageContent::new`].
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Image(ImageContent::new(data, mime_type))
    }

    /// An audio block; see [`AudioContent::new`].
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self::Audio(AudioContent::new(data, mime_type))
    }
}

impl Completion {
    /// Suggestions: the first [`MAX_VALUES`](Self::MAX_VALUES) of `values`, with `total`
    /// set to how many there were and `hasMore` set when some were left out.
    pub fn new<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Self {
        let all: Vec<String> = values.into_iter().map(Into::into).collect();
        let total = all.len();
        let values: Vec<String> = all.into_iter().take(Self::MAX_VALUES).collect();
        Self {
            has_more: Some(values.len() < total),
            total: Some(total as u64),
            values,
            extra: Map::new(),
        }
    }
}

impl CompleteResult {
    /// The answer to `completion/complete`; see [`Completion::new`].
    pub fn new<S: Into<String>>(values: impl IntoIterator<Item = S>) -> Self {
        Self { completion: Completion::new(values), ..Self::default() }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn call_params_take_any_object_and_refuse_other_shapes() {
        let p = CallToolParams::new("add", json!({"a": 1}));
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"name": "add", "arguments": {"a": 1}})
        );
        assert_eq!(CallToolParams::new("ping", ()).arguments, None);
        let refused = std::panic::catch_unwind(|| CallToolParams::new("x", json!([1])));
        assert!(refused.is_err());
    }

    #[test]
    fn completion_values_are_capped_at_one_hundred() {
        let c = CompleteResult::new((0..150).map(|i| i.to_string())).completion;
        assert_eq!((c.values.len(), c.total, c.has_more), (100, Some(150), Some(true)));
        let few = Completion::new(["a", "b"]);
        assert_eq!((few.values.len(), few.has_more), (2, Some(false)));
    }

    #[test]
    fn builders_fill_the_wire_fields() {
        let tool = Tool::default()
            .with_title("Delete")
            .with_annotations(ToolAnnotations::new().destructive(true).idempotent());
        let wire = serde_json::to_value(&tool).unwrap();
        assert_eq!(wire["title"], "Delete");
        assert_eq!(wire["annotations"], json!({"destructiveHint": true, "idempotentHint": true}));
        let image = serde_json::to_value(ContentBlock::image("AAAA", "image/png")).unwrap();
        assert_eq!(image, json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}));
        let answer = serde_json::to_value(CreateMessageResult::text("m", "hi")).unwrap();
        assert_eq!(
            answer,
            json!({"role": "assistant", "content": {"type": "text", "text": "hi"},
                   "model": "m", "stopReason": "endTurn"})
        );
    }
}
