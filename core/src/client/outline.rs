//! What the client machine itself reads of a sampling or elicitation request's params: only
//! the members its capability rules name. The params as a whole are decoded by the handler
//! that answers ([`RawParams`](super::RawParams)), so a client that answers neither links no
//! decoder for them.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use crate::jsonrpc::RawJson;

/// The members of a sampling or elicitation request the client's own rules look at; a
/// member that does not fit reads as absent (the answering handler's decoding refuses it).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Outline {
    /// Sampling: tools offered to the model.
    #[serde(default, deserialize_with = "present")]
    tools: bool,
    /// Sampling: how the model is to use them.
    #[serde(default, rename = "toolChoice", deserialize_with = "present")]
    tool_choice: bool,
    /// Elicitation: `form` (also when absent) or `url`.
    #[serde(default, deserialize_with = "lenient")]
    pub(crate) mode: Option<String>,
    /// Elicitation in URL mode: the id its completion notification names.
    #[serde(default, rename = "elicitationId", deserialize_with = "lenient")]
    elicitation_id: Option<String>,
}

impl Outline {
    /// The outline of `params`; all absent where they are not an object.
    pub(crate) fn of(params: Option<&RawJson>) -> Self {
        params.and_then(|p| p.parse().ok()).unwrap_or_default()
    }

    /// A sampling request that offers the model tools (`tools` or `toolChoice`, not null).
    pub(super) fn offers_tools(&self) -> bool {
        self.tools || self.tool_choice
    }

    /// The id of a URL-mode elicitation, whose completion the server may announce.
    pub(super) fn url_elicitation_id(&self) -> Option<String> {
        match self.mode.as_deref() {
            Some("url") => self.elicitation_id.clone(),
            _ => None,
        }
    }
}

/// A member present and not null.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(Option::<IgnoredAny>::deserialize(d)?.is_some())
}

/// A string member; anything else reads as absent.
fn lenient<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::String(s)) => Some(s),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn outline(params: Value) -> Outline {
        Outline::of(Some(&RawJson::from(params)))
    }

    #[test]
    fn tools_count_when_present_and_not_null() {
        assert!(outline(json!({"messages": [], "tools": []})).offers_tools());
        assert!(outline(json!({"toolChoice": {"mode": "auto"}})).offers_tools());
        assert!(!outline(json!({"messages": [], "tools": null})).offers_tools());
        assert!(!outline(json!({"messages": []})).offers_tools());
        assert!(!Outline::of(None).offers_tools());
    }

    #[test]
    fn only_a_url_mode_elicitation_has_an_id_to_await() {
        let url = json!({"mode": "url", "elicitationId": "e1", "url": "https://x", "message": "m"});
        assert_eq!(outline(url).url_elicitation_id().as_deref(), Some("e1"));
        let form = json!({"elicitationId": "e1", "message": "m"});
        assert_eq!(outline(form).url_elicitation_id(), None);
        // A mode that is not a string reads as absent, as does a params value that is not an
        // object: the handler's decoding answers those.
        assert_eq!(outline(json!({"mode": 7, "message": "m"})).mode, None);
        assert_eq!(outline(json!([1, 2])).mode, None);
    }
}
