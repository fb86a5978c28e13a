//! [`ToolError`]: what a typed handler's `Err` turns into, so `?` works on any error.

use std::any::Any;
use std::fmt;

use crate::jsonrpc::ErrorObject;
use crate::schema::CallToolResult;

/// A typed handler's failure: either a failure of the tool that the model should see (an
/// `isError: true` result carrying the message), or a JSON-RPC error the handler asked for
/// explicitly with [`ToolError::protocol`], which keeps its code, message and data.
///
/// Every `std::error::Error` converts into it, so `?` works in handlers: an `io::Error`
/// becomes an `isError` result whose text is the error's message. An [`ErrorObject`] that
/// arrives through `?` is a tool failure too, carrying its `message` (as the TypeScript and
/// Python SDKs treat errors thrown by tools); wrap it in [`ToolError::protocol`] to answer
/// with a JSON-RPC error instead.
///
/// For a prompt handler (whose failures are always JSON-RPC errors) a tool failure becomes an
/// internal error (-32603) with the message.
///
/// Like `anyhow::Error`, it does not implement `std::error::Error` itself: that is what lets
/// every error type convert into it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError {
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Failed(String),
    Protocol(ErrorObject),
}

impl ToolError {
    /// A tool failure the model sees: an `isError: true` result with `message` as its text.
    pub fn new(message: impl Into<String>) -> Self {
        Self { kind: Kind::Failed(message.into()) }
    }

    /// A JSON-RPC error response instead of a result, sent with its code, message and data
    /// as given. For requests that cannot be served at all; a tool that ran and failed
    /// SHOULD use [`new`](Self::new) so the model can see why.
    pub fn protocol(error: ErrorObject) -> Self {
        Self { kind: Kind::Protocol(error) }
    }

    /// The message: the tool failure's text, or the JSON-RPC error's `message`.
    pub fn message(&self) -> &str {
        match &self.kind {
            Kind::Failed(m) => m,
            Kind::Protocol(e) => &e.message,
        }
    }

    /// The JSON-RPC error, when the handler asked for one with [`protocol`](Self::protocol).
    pub fn as_protocol(&self) -> Option<&ErrorObject> {
        match &self.kind {
            Kind::Failed(_) => None,
            Kind::Protocol(e) => Some(e),
        }
    }

    /// What a tool answers: `Ok` with an `isError` result for a tool failure, `Err` with
    /// the JSON-RPC error for a protocol error.
    pub fn into_tool_outcome(self) -> Result<CallToolResult, ErrorObject> {
        match self.kind {
            Kind::Failed(m) => Ok(CallToolResult::error_text(m)),
            Kind::Protocol(e) => Err(e),
        }
    }

    /// What a prompt, resource or completion handler answers: always a JSON-RPC error; a
    /// tool failure becomes an internal error (-32603) with the message.
    pub fn into_error_object(self) -> ErrorObject {
        match self.kind {
            Kind::Failed(m) => ErrorObject::internal(m),
            Kind::Protocol(e) => e,
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Failed(m) => f.write_str(m),
            Kind::Protocol(e) => write!(f, "{e}"),
        }
    }
}

/// `?` on any error: a tool failure with the error's message (an [`ErrorObject`]'s
/// `message` alone, without its code).
impl<E: std::error::Error + 'static> From<E> for ToolError {
    fn from(error: E) -> Self {
        let message = match (&error as &dyn Any).downcast_ref::<ErrorObject>() {
            Some(object) => object.message.clone(),
            None => error.to_string(),
        };
        Self::new(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::codes;

    fn read_missing() -> Result<String, ToolError> {
        Ok(String::from_utf8(vec![b'a', 0xff])?)
    }

    #[test]
    fn question_mark_turns_any_error_into_a_tool_failure_with_its_message() {
        let e = read_missing().unwrap_err();
        assert!(e.as_protocol().is_none());
        let result = e.into_tool_outcome().unwrap();
        assert!(result.is_error());
        let text = result.content[0].as_text().unwrap().to_owned();
        assert!(text.contains("invalid utf-8"), "{text}");
    }

    #[test]
    fn an_error_object_through_question_mark_keeps_only_its_message() {
        let e = ToolError::from(ErrorObject::invalid_params("no such row"));
        assert_eq!(e.message(), "no such row");
        assert_eq!(e.into_tool_outcome().unwrap(), CallToolResult::error_text("no such row"));
    }

    #[test]
    fn a_protocol_error_keeps_code_message_and_data() {
        let object = ErrorObject::new(codes::URL_ELICITATION_REQUIRED, "open this")
            .with_data(serde_json::json!({"url": "https://example.invalid"}));
        let e = ToolError::protocol(object.clone());
        assert_eq!(e.clone().into_tool_outcome().unwrap_err(), object);
        assert_eq!(e.into_error_object(), object);
        assert_eq!(ToolError::new("x").into_error_object().code, codes::INTERNAL_ERROR);
    }
}
