//! Short constructors for the items a server registers and the results handlers return.

use serde_json::Value;

use crate::json_schema::{self, SchemaError};

use super::{
    ContentBlock, GetPromptResult, ObjectSchema, ObjectSchemaError, Prompt, PromptArgument,
    PromptMessage, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role,
    TextResourceContents, Tool,
};

impl ObjectSchema {
    /// Reads a tool schema from JSON: a JSON object whose root `type` is `"object"` (MCP
    /// requires it of `inputSchema`, and of `outputSchema` up to 2025-11-25) and which
    /// [`check_schema`](crate::json_schema::check_schema) accepts. Every keyword is kept.
    pub fn try_from_value(schema: Value) -> Result<Self, ObjectSchemaError> {
        let Value::Object(members) = &schema else { return Err(ObjectSchemaError::NotAnObject) };
        match members.get("type") {
            Some(Value::String(kind)) if kind == "object" => {}
            found => return Err(ObjectSchemaError::RootNotObject { found: found.cloned() }),
        }
        json_schema::check_schema(&schema).map_err(ObjectSchemaError::Unusable)?;
        // Checked above: an object with `type: "object"`, a string `$schema`, an object
        // `properties` and a string array `required`; so this only fails on a serde bug.
        serde_json::from_value(schema).map_err(|e| {
            ObjectSchemaError::Unusable(SchemaError { path: String::new(), message: e.to_string() })
        })
    }

    /// Reads a tool schema written into the program, as
    /// [`try_from_value`](Self::try_from_value) does.
    ///
    /// # Panics
    ///
    /// When `try_from_value` fails: a malformed schema literal is a bug to fix, like a
    /// malformed regex literal. Use `try_from_value` for schemas read at run time.
    pub fn from_value(schema: Value) -> Self {
        Self::try_from_value(schema).unwrap_or_else(|e| panic!("invalid tool schema: {e}"))
    }
}

impl Tool {
    /// A tool with a name, a description and an input schema, or why the schema cannot be a
    /// tool's `inputSchema` (see [`ObjectSchema::try_from_value`]). For schemas read at run
    /// time (from configuration, from another server).
    pub fn try_new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Result<Self, ObjectSchemaError> {
        Ok(Self {
            name: name.into(),
            description: Some(description.into()),
            input_schema: ObjectSchema::try_from_value(input_schema)?,
            ..Self::default()
        })
    }

    /// A tool with a name, a description and an input schema written into the program.
    ///
    /// # Panics
    ///
    /// When [`try_new`](Self::try_new) fails: the schema is not a JSON object whose root
    /// `type` is `"object"`, or zest's validator cannot apply it. Like the TypeScript SDK's
    /// `registerTool`, this fails loudly at start-up rather than publishing a tool whose
    /// schema clients reject or that validates nothing; a malformed literal is a bug, not a
    /// condition to handle.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        let name = name.into();
        match Self::try_new(name.clone(), description, input_schema) {
            Ok(tool) => tool,
            Err(e) => panic!("invalid inputSchema for tool {name:?}: {e}"),
        }
    }

    /// Sets the output schema; results must then carry matching `structuredContent`. `Err`
    /// (and the tool dropped) as for [`try_new`](Self::try_new).
    pub fn try_with_output_schema(
        mut self,
        output_schema: Value,
    ) -> Result<Self, ObjectSchemaError> {
        self.output_schema = Some(ObjectSchema::try_from_value(output_schema)?);
        Ok(self)
    }

    /// Sets an output schema written into the program; results must then carry matching
    /// `structuredContent`.
    ///
    /// # Panics
    ///
    /// When [`try_with_output_schema`](Self::try_with_output_schema) fails, as
    /// [`new`](Self::new) does.
    pub fn with_output_schema(self, output_schema: Value) -> Self {
        let name = self.name.clone();
        self.try_with_output_schema(output_schema)
            .unwrap_or_else(|e| panic!("invalid outputSchema for tool {name:?}: {e}"))
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
