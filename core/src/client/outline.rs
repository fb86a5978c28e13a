//! What the client machine itself reads of a sampling or elicitation request's params: only
//! the members its capability rules name. The params as a whole are decoded by the handler
//! that answers ([`RawParams`](super::RawParams)), so a client that answers neither links no
//! decoder for them.

use std::collections::HashMap;

use serde_json::value::RawValue;

use crate::jsonrpc::RawJson;

/// The members of a sampling or elicitation request the client's own rules look at. Read
/// as the full decoding reads them (a repeated member: its last value), so that the two
/// never disagree; absent where the params are not an object.
#[derive(Debug, Default)]
pub(crate) struct Outline {
    /// Sampling: `tools` or `toolChoice` is there, not null.
    offers_tools: bool,
    /// Elicitation: `form` (also when absent) or `url`; `None` also when not a string.
    pub(crate) mode: Option<String>,
    /// Elicitation in URL mode: the id its completion notification names, when the request
    /// has every member a URL-mode elicitation needs.
    url_elicitation_id: Option<String>,
}

impl Outline {
    /// The outline of `params`.
    pub(crate) fn of(params: Option<&RawJson>) -> Self {
        let Some(members) =
            params.and_then(|p| serde_json::from_str::<HashMap<String, &RawValue>>(p.get()).ok())
        else {
            return Self::default();
        };
        let present = |key: &str| members.get(key).is_some_and(|v| v.get() != "null");
        let string =
            |key: &str| members.get(key).and_then(|v| serde_json::from_str::<String>(v.get()).ok());
        let mode = string("mode");
        let url_elicitation_id = match mode.as_deref() {
            Some("url") if string("url").is_some() && string("message").is_some() => {
                string("elicitationId")
            }
            _ => None,
        };
        Self { offers_tools: present("tools") || present("toolChoice"), mode, url_elicitation_id }
    }

    /// A sampling request that offers the model tools.
    pub(crate) fn offers_tools(&self) -> bool {
        self.offers_tools
    }

    /// The id of a URL-mode elicitation, whose completion the server may announce.
    pub(crate) fn url_elicitation_id(self) -> Option<String> {
        self.url_elicitation_id
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn outline(params: Value) -> Outline {
        Outline::of(Some(&RawJson::from(params)))
    }

    fn outline_of_text(text: &str) -> Outline {
        Outline::of(Some(&RawJson::from_raw(RawValue::from_string(text.into()).unwrap())))
    }

    #[test]
    fn tools_count_when_present_and_not_null() {
        assert!(outline(json!({"messages": [], "tools": []})).offers_tools());
        assert!(outline(json!({"toolChoice": {"mode": "auto"}})).offers_tools());
        assert!(!outline(json!({"messages": [], "tools": null})).offers_tools());
        assert!(!outline(json!({"messages": []})).offers_tools());
        assert!(!Outline::of(None).offers_tools());
        // Not an object: nothing is there (the decoding refuses it).
        assert!(!outline(json!([[], null, "url", "e1"])).offers_tools());
    }

    #[test]
    fn only_a_whole_url_mode_elicitation_has_an_id_to_await() {
        let url = json!({"mode": "url", "elicitationId": "e1", "url": "https://x", "message": "m"});
        assert_eq!(outline(url).url_elicitation_id().as_deref(), Some("e1"));
        let form = json!({"elicitationId": "e1", "message": "m"});
        assert_eq!(outline(form).url_elicitation_id(), None);
        let no_url = json!({"mode": "url", "elicitationId": "e1", "message": "m"});
        assert_eq!(outline(no_url).url_elicitation_id(), None);
        // A mode that is not a string reads as absent, as does a params value that is not an
        // object: the handler's decoding answers those.
        assert_eq!(outline(json!({"mode": 7, "message": "m"})).mode, None);
        assert_eq!(outline(json!(["url"])).mode, None);
    }

    #[test]
    fn a_repeated_member_reads_as_its_last_value_as_the_decoding_reads_it() {
        let twice =
            r#"{"mode":"form","mode":"url","message":"m","url":"https://x","elicitationId":"e"}"#;
        let outline = outline_of_text(twice);
        assert_eq!(outline.mode.as_deref(), Some("url"));
        assert_eq!(outline.url_elicitation_id().as_deref(), Some("e"));
        assert!(outline_of_text(r#"{"tools":null,"tools":[]}"#).offers_tools());
        // The full decoding agrees.
        let raw = RawJson::from_raw(RawValue::from_string(twice.into()).unwrap());
        let decoded: crate::schema::ElicitParams = raw.parse().unwrap();
        assert!(matches!(decoded, crate::schema::ElicitParams::Url(_)));
    }
}
