//! Short constructors for the items a server registers and the results handlers return.

use serde_json::Value;

use super::{
    ContentBlock, GetPromptResult, ObjectSchema, Prompt, PromptArgument, PromptMessage,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role, TextResourceContents,
    Tool,
};

impl ObjectSchema {
    /// Reads a schema from JSON; a schema that is not an object becomes `{"type":"object"}`
    /// with the original keywords kept where possible.
    pub fn from_value(schema: Value) -> Self {
        serde_json::from_value(schema).unwrap_or_default()
    }
}

impl Tool {
    /// A tool with a name, a description and an input schema (a JSON object schema).
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: Some(description.into()),
            input_schema: ObjectSchema::from_value(input_schema),
            ..Self::default()
        }
    }

    /// Sets the output schema; results must then carry matching `structuredContent`.
    pub fn with_output_schema(mut self, output_schema: Value) -> Self {
        self.output_schema = Some(ObjectSchema::from_value(output_schema));
        self
    }
}

impl Resource {
    /// A resource with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self { uri: uri.into(), name: name.into(), ..Self::default() }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

impl ResourceTemplate {
    /// A template (RFC 6570) with a name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self { uri_template: uri_template.into(), name: name.into(), ..Self::default() }
    }
}

impl Prompt {
    /// A prompt with a name and a description.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self { name: name.into(), description: Some(description.into()), ..Self::default() }
    }

    /// Adds an argument.
    pub fn with_argument(mut self, name: impl Into<String>, required: bool) -> Self {
        let arg =
            PromptArgument { name: name.into(), required: Some(required), ..Default::default() };
        self.arguments.get_or_insert_with(Vec::new).push(arg);
        self
    }
}

impl ReadResourceResult {
    /// One text item.
    pub fn text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Self {
        let contents = TextResourceContents {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            text: text.into(),
            ..Default::default()
        };
        Self { contents: vec![ResourceContents::Text(contents)], ..Self::default() }
    }
}

impl GetPromptResult {
    /// One user message of text.
    pub fn user_text(text: impl Into<String>) -> Self {
        let message = PromptMessage::new(Role::User, ContentBlock::text(text));
        Self { messages: vec![message], ..Self::default() }
    }
}
