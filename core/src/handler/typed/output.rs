//! What typed handlers may return, and how each becomes the answer.

use serde_json::Value;

use crate::handler::ToolError;
use crate::schema::{CallToolResult, ContentBlock, GetPromptResult, PromptMessage};

/// A typed tool's return value.
///
/// Text (`String`, `&'static str`), nothing (`()`: an empty result), content blocks, a whole [`CallToolResult`], [`Json<T>`]
/// (structured output), or a `Result` of one of these whose `Err` converts into
/// [`ToolError`] (so any `std::error::Error` does).
pub trait IntoToolResult {
    /// The result to send, or the error to turn into one.
    fn into_tool_result(self) -> Result<CallToolResult, ToolError>;

    /// The tool's `outputSchema`, for return types that carry structured content.
    fn output_schema() -> Option<Value> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(self)
    }
}

/// A successful result with no content, for tools run for their effect.
impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::default())
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult { content: vec![self], ..CallToolResult::default() })
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult { content: self, ..CallToolResult::default() })
    }
}

impl<R: IntoToolResult, E: Into<ToolError>> IntoToolResult for Result<R, E> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        self.map_err(Into::into)?.into_tool_result()
    }

    fn output_schema() -> Option<Value> {
        R::output_schema()
    }
}

/// Structured output: `T` serialized into `structuredContent` and, for clients that predate
/// structured output, into a text block of the same JSON. With feature `schemars`, the tool
/// declares `T`'s schema as its `outputSchema` (`T` MUST then serialize to a JSON object),
/// and the session checks every result against it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Json<T>(pub T);

#[cfg(feature = "schemars")]
impl<T: serde::Serialize + schemars::JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, ToolError> {
        let value = serde_json::to_value(&self.0).map_err(|e| {
            ToolError::protocol(crate::jsonrpc::ErrorObject::internal(format!(
                "the tool's result could not be serialized: {e}"
            )))
        })?;
        Ok(CallToolResult::structured(value))
    }

    fn output_schema() -> Option<Value> {
        Some(super::object_schema_for::<T>().unwrap_or_else(|e| {
            let name = std::any::type_name::<T>();
            panic!("the result type {name} cannot be a tool's structured output: {e}")
        }))
    }
}

/// A typed prompt's return value: the rendered messages.
///
/// A whole [`GetPromptResult`], one [`PromptMessage`] or a list of them, text (one user
/// message), or a `Result` of one of these whose `Err` converts into [`ToolError`] (always
/// answered with a JSON-RPC error).
pub trait IntoPromptResult {
    /// The result to send, or the error to answer with.
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(self)
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(GetPromptResult::user_text(self))
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(GetPromptResult::user_text(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        vec![self].into_prompt_result()
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(GetPromptResult { messages: self, ..GetPromptResult::default() })
    }
}

impl<R: IntoPromptResult, E: Into<ToolError>> IntoPromptResult for Result<R, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        self.map_err(Into::into)?.into_prompt_result()
    }
}
