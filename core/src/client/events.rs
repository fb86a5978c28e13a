//! What a [`Client`](super::Client) reports.

use std::fmt;
use std::marker::PhantomData;

use super::config::Negotiated;
use crate::auth::Tokens;
use crate::error::{CloseReason, ProtocolViolation, Rejection, RequestError};
use crate::jsonrpc::{ErrorObject, Notification, RawJson, RequestId};
use crate::rpc::parse_params;
use crate::schema::{
    CreateMessageParams, ElicitParams, ElicitationCompleteParams, EmptyParams,
    LoggingMessageParams, ProgressParams, ResourceUpdatedParams,
};

/// Something that happened on a client session.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// OAuth: a user must authorize. Open `url` (show its host), and hand the whole URL the
    /// browser is sent back to to [`Client::authorize`](super::Client::authorize); or
    /// [`Client::refuse_authorization`](super::Client::refuse_authorization) if nobody will.
    /// Requests wait meanwhile.
    AuthorizationRequired {
        /// The authorization request.
        url: String,
    },
    /// The server cancelled a request it had sent us; do not answer it.
    Cancelled {
        /// The server's request id.
        id: RequestId,
    },
    /// The session is over. Emitted exactly once, last; every pending request has already
    /// had its `Response`.
    Closed(CloseReason),
    /// A notification from the server.
    Notification(ServerNotification),
    /// Progress on one of our requests.
    Progress {
        /// Our request.
        id: RequestId,
        /// What the server reported.
        progress: ProgressParams,
    },
    /// The handshake finished; requests may be sent.
    Ready(Box<Negotiated>),
    /// A request from the server; answer it with [`Client::respond`](super::Client::respond).
    Request {
        /// The server's request id.
        id: RequestId,
        /// What it asks.
        request: ServerRequest,
    },
    /// The one outcome of one of our requests.
    Response {
        /// Our request.
        id: RequestId,
        /// The raw result, or why there is none. Decode with
        /// [`decode_result`](crate::client::decode_result).
        result: Result<RawJson, RequestError>,
    },
    /// The HTTP server ended the session (404 to a request carrying its session id). Every
    /// request in flight has had its `Response` with
    /// [`RequestError::SessionExpired`](crate::error::RequestError::SessionExpired); a fresh
    /// `initialize` is on its way, and [`Event::Ready`] follows again (or
    /// [`Event::Closed`]). Requests made before that fail at once with `SessionExpired`.
    SessionExpired,
    /// OAuth with [`OAuthConfig::shared_cache`](crate::auth::OAuthConfig::shared_cache):
    /// before refreshing, the client wants the shared cache's tokens; answer with
    /// [`Client::cached_tokens`](super::Client::cached_tokens). Requests wait meanwhile.
    LoadTokens,
    /// OAuth: new tokens (issued or refreshed), for the application's cache; load them
    /// next time with [`OAuthConfig::tokens`](crate::auth::OAuthConfig::tokens).
    TokensChanged(Tokens),
    /// The server broke a protocol rule; the session goes on.
    Violation(ProtocolViolation),
}

/// A request the server sends to the client.
///
/// Sampling and elicitation params come as the server sent them, decoded by whoever answers
/// ([`RawParams::decode`]; zest's client handlers do it for you): a program that answers
/// neither links no decoder for them (about 180 KB of code). What the client itself must
/// know of them (tools offered to sampling, the elicitation mode) it reads without decoding
/// the rest. So params that do not fit reach the app, whose answer with the decoding's
/// -32602 goes back to the server; for a 2026-07-28 input request it fails the call with
/// [`RequestError::InvalidResult`] instead, and the call's other asks are cancelled (their
/// handlers may have started meanwhile).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerRequest {
    /// `sampling/createMessage`.
    CreateMessage(RawParams<CreateMessageParams>),
    /// `elicitation/create`.
    Elicit(RawParams<ElicitParams>),
    /// `roots/list`.
    ListRoots(EmptyParams),
}

impl ServerRequest {
    /// Reads a request of one of the methods the client hands to the app, by name; `None`
    /// for any other method, which the client answers with -32601 whatever the rule table
    /// lets through (tasks, say). `Err` when the params do not fit the method (of those it
    /// decodes: see [`RawParams`]).
    pub(crate) fn parse(method: &str, params: Option<&RawJson>) -> Option<Result<Self, String>> {
        let request = match method {
            "sampling/createMessage" => Ok(Self::CreateMessage(RawParams::new(params))),
            "elicitation/create" => Ok(Self::Elicit(RawParams::new(params))),
            "roots/list" => parse_params(params).map(Self::ListRoots),
            _ => return None,
        };
        Some(request)
    }

    /// The wire method name.
    pub fn method(&self) -> &'static str {
        match self {
            Self::CreateMessage(_) => "sampling/createMessage",
            Self::Elicit(_) => "elicitation/create",
            Self::ListRoots(_) => "roots/list",
        }
    }
}

/// A server request's params as the server sent them, to be decoded as `T` by whoever
/// answers the request. The decoding code is linked only where [`decode`](Self::decode) is
/// called.
pub struct RawParams<T> {
    raw: Option<RawJson>,
    decodes_as: PhantomData<fn() -> T>,
}

impl<T> RawParams<T> {
    /// Params as sent (`None`: the request had none).
    pub fn new(raw: Option<&RawJson>) -> Self {
        Self { raw: raw.cloned(), decodes_as: PhantomData }
    }

    /// The params as the server sent them.
    pub fn raw(&self) -> Option<&RawJson> {
        self.raw.as_ref()
    }
}

impl<T: serde::de::DeserializeOwned> RawParams<T> {
    /// The params decoded; absent params read as `{}`. A misfit is the -32602 error to
    /// answer the request with.
    pub fn decode(&self) -> Result<T, ErrorObject> {
        parse_params(self.raw.as_ref()).map_err(|why| Rejection::InvalidParams(why).to_jsonrpc())
    }
}

impl<T: serde::Serialize> From<&T> for RawParams<T> {
    /// Params made here (tests, a client answering its own requests).
    fn from(params: &T) -> Self {
        Self { raw: Some(RawJson::from_serialize(params)), decodes_as: PhantomData }
    }
}

impl<T> Clone for RawParams<T> {
    fn clone(&self) -> Self {
        Self { raw: self.raw.clone(), decodes_as: PhantomData }
    }
}

impl<T> PartialEq for RawParams<T> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

impl<T> fmt::Debug for RawParams<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawParams").field(&self.raw).finish()
    }
}

/// A notification the server sends to the client (progress and cancellation are handled by
/// the machine and reported as [`Event::Progress`] and [`Event::Cancelled`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ServerNotification {
    /// `notifications/elicitation/complete`.
    ElicitationComplete(ElicitationCompleteParams),
    /// `notifications/message`: a log record.
    LoggingMessage(LoggingMessageParams),
    /// `notifications/prompts/list_changed`.
    PromptListChanged,
    /// `notifications/resources/list_changed`.
    ResourceListChanged,
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdatedParams),
    /// `notifications/tools/list_changed`.
    ToolListChanged,
    /// Any other notification, raw.
    Other(Notification),
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_named_method_parses_to_its_variant_and_nothing_else_does() {
        let sampling = json!({"messages": [], "maxTokens": 1});
        let elicit =
            json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {}}});
        for (method, params) in [
            ("sampling/createMessage", Some(sampling)),
            ("elicitation/create", Some(elicit)),
            ("roots/list", None),
        ] {
            let params = params.map(RawJson::from);
            let request = ServerRequest::parse(method, params.as_ref()).unwrap().unwrap();
            assert_eq!(request.method(), method);
        }
        for method in ["ping", "tasks/get", "tasks/list", "roots/lists", ""] {
            assert_eq!(ServerRequest::parse(method, None), None, "{method}");
        }
        // Sampling and elicitation params are decoded by whoever answers.
        let Some(Ok(ServerRequest::CreateMessage(p))) =
            ServerRequest::parse("sampling/createMessage", None)
        else {
            panic!("sampling/createMessage is a request the client hands on");
        };
        assert_eq!(p.decode().unwrap_err().code, -32602);
    }
}
