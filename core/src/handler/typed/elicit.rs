//! Typed elicitation: a form generated from a Rust type, the answer validated and
//! deserialized into it ([`RequestContext::elicit_as`]).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::object_schema_for;
use crate::api::{CallError, PeerApi};
use crate::error::RequestError;
use crate::json_schema::validate;
use crate::runtime::{Link, RequestContext};
use crate::schema::{ElicitAction, ElicitFormParams, ElicitParams, ElicitResult};

/// The user's answer to a typed elicitation. Non-exhaustive: a later revision may add
/// actions, so a `match` needs a `_` arm.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Elicited<T> {
    /// The user submitted the form; the answer matched the requested schema.
    Accept(T),
    /// The user dismissed the form without choosing.
    Cancel,
    /// The user refused.
    Decline,
}

impl ElicitFormParams {
    /// A form asking for `T`'s fields, with `message` for the user: `T`'s schema as the
    /// restricted schema forms allow (a flat object of strings, numbers, integers, booleans
    /// and string enums; an `Option` field is an optional one).
    ///
    /// `Err` names the field that is not a primitive (a nested struct, a list of structs).
    pub fn for_type<T: JsonSchema>(message: impl Into<String>) -> Result<Self, String> {
        let schema = form_schema::<T>()?;
        let requested_schema = serde_json::from_value(schema).map_err(|e| e.to_string())?;
        Ok(Self { message: message.into(), requested_schema, ..Self::default() })
    }
}

/// Typed elicitation on every runtime's request context.
impl<L: Link> RequestContext<L> {
    /// Asks the user to fill in `T`'s fields (`elicitation/create`, form mode; the client
    /// must declare `elicitation`) and yields the answer as `T`. An accepted answer that does
    /// not match `T`'s schema, or does not deserialize into `T`, is
    /// `CallError::Request(RequestError::InvalidResult)` naming the field. Like every peer
    /// request, it returns a future in zest-tokio and zest-smol and the result in
    /// zest-blocking.
    ///
    /// # Panics
    ///
    /// When `T` cannot be a form ([`ElicitFormParams::for_type`]): a nested type is a bug
    /// in the program, found the first time the call runs.
    pub fn elicit_as<T>(&self, message: &str) -> L::Reply<'_, Result<Elicited<T>, CallError>>
    where
        T: DeserializeOwned + JsonSchema + 'static,
    {
        let form = ElicitFormParams::for_type::<T>(message).unwrap_or_else(|e| {
            panic!("{} cannot be an elicitation form: {e}", std::any::type_name::<T>())
        });
        // Through the era-aware ask, as every ask of the client: a related request in the
        // session era, the call's own answers or an input-required result in 2026-07-28.
        L::map(self.elicit(ElicitParams::from(form)), answer::<T>)
    }
}

/// `T`'s schema as a form: each property's `type: [X, "null"]` (an `Option`) becomes `X`,
/// and any property that is not a primitive is refused.
fn form_schema<T: JsonSchema>() -> Result<Value, String> {
    let mut schema = object_schema_for::<T>()?;
    let properties = schema.get_mut("properties").and_then(Value::as_object_mut);
    for (name, property) in properties.into_iter().flatten() {
        let Value::Object(members) = property else {
            return Err(format!("field {name} has no schema"));
        };
        if let Some(Value::Array(kinds)) = members.get("type") {
            let kinds: Vec<&Value> = kinds.iter().filter(|k| *k != "null").collect();
            if let [kind] = kinds[..] {
                let kind = kind.clone();
                members.insert("type".into(), kind);
            }
        }
        let kind = members.get("type").and_then(Value::as_str).unwrap_or("");
        let primitive = matches!(kind, "string" | "number" | "integer" | "boolean")
            || (kind == "array" && string_enum_items(members));
        if !primitive {
            return Err(format!("field {name} is not a string, number, boolean or enum"));
        }
    }
    Ok(schema)
}

/// A multi-select enum: `items` is a string enum.
fn string_enum_items(members: &Map<String, Value>) -> bool {
    members
        .get("items")
        .is_some_and(|i| i.get("type") == Some(&Value::from("string")) && i.get("enum").is_some())
}

/// The client's raw answer as `T`.
fn answer<T: DeserializeOwned + JsonSchema>(
    outcome: Result<ElicitResult, CallError>,
) -> Result<Elicited<T>, CallError> {
    let result = outcome?;
    match result.action {
        ElicitAction::Accept => {}
        ElicitAction::Cancel => return Ok(Elicited::Cancel),
        ElicitAction::Decline => return Ok(Elicited::Decline),
    }
    let invalid = |message: String| CallError::Request(RequestError::InvalidResult(message));
    let content = Value::Object(result.content.unwrap_or_default());
    // Generated before the request was sent, so it generates again.
    let schema = form_schema::<T>().map_err(invalid)?;
    if let Err(errors) = validate(&schema, &content) {
        let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
        return Err(invalid(format!("the answer does not match the form: {}", list.join("; "))));
    }
    serde_path_to_error::deserialize(content)
        .map(Elicited::Accept)
        .map_err(|e| invalid(format!("the answer does not fit: {}: {}", e.path(), e.inner())))
}

#[cfg(test)]
mod tests;
