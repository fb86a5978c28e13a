//! Asking the client for something while serving its request: one call for both eras.
//!
//! A handler that needs sampling, an answer from the user (elicitation) or the client's
//! roots says so with [`Session::ask`], naming the call it serves. What happens next is the
//! session's business, not the handler's:
//!
//! - **Session era** (2024-11-05 … 2025-11-25): the session sends the client a request
//!   *related to* the call, so over Streamable HTTP it travels on the call's own SSE stream,
//!   and answers [`Asked::Sent`] with its id; the answer arrives as
//!   [`Event::Response`](super::Event::Response) with that id, and the handler goes on.
//! - **2026-07-28**: servers send no requests. The call ends with an
//!   [`InputRequiredResult`](crate::schema::InputRequiredResult) carrying the
//!   [`InputRequest`]s and a `requestState`; the client answers them and retries the call
//!   with `inputResponses`, and the same handler code runs again, finding its answers in
//!   hand. That era's machine will answer `ask` from the retry's responses or with an
//!   `Asked` variant that tells the runtime to end the call with input required; the enum
//!   is non-exhaustive for it.
//!
//! Runtimes wrap this in their handler contexts (`ctx.sample(..)`, `ctx.elicit(..)`,
//! `ctx.list_roots()`), so application code is the same in both eras.

use std::time::Instant;

use super::Session;
use crate::error::UsageError;
use crate::jsonrpc::{RawJson, RequestId};
use crate::rpc::RequestOptions;
use crate::schema::{CreateMessageParams, ElicitParams, InputRequest};

/// What a handler asks the client for.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Ask {
    /// `elicitation/create`: a question for the user.
    Elicit(Box<ElicitParams>),
    /// `roots/list`: the client's roots.
    ListRoots,
    /// `sampling/createMessage`: a completion from the client's model.
    Sample(Box<CreateMessageParams>),
}

/// How an [`Ask`] proceeds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Asked {
    /// A request went to the client, related to the call; its one outcome arrives as
    /// `Event::Response` with this id.
    Sent(RequestId),
}

impl Ask {
    /// The method that carries this ask.
    pub fn method(&self) -> &'static str {
        match self {
            Self::Elicit(_) => "elicitation/create",
            Self::ListRoots => "roots/list",
            Self::Sample(_) => "sampling/createMessage",
        }
    }

    /// The same ask as a 2026-07-28 input request.
    pub fn into_input_request(self) -> InputRequest {
        match self {
            Self::Elicit(p) => InputRequest::Elicit(p),
            Self::ListRoots => InputRequest::ListRoots(Default::default()),
            Self::Sample(p) => InputRequest::CreateMessage(p),
        }
    }

    fn params(&self) -> Option<RawJson> {
        match self {
            Self::Elicit(p) => Some(RawJson::from_serialize(p)),
            Self::ListRoots => None,
            Self::Sample(p) => Some(RawJson::from_serialize(p)),
        }
    }
}

impl<H: Clone> Session<H> {
    /// Asks the client for something while serving its request `call` (see the
    /// [crate docs](crate)). Fails like [`request`](Self::request) when the client did not
    /// declare the capability the ask needs, or the revision lacks the method.
    pub fn ask(
        &mut self,
        now: Instant,
        call: &RequestId,
        ask: &Ask,
        opts: RequestOptions,
    ) -> Result<Asked, UsageError> {
        let id = self.request(now, Some(call), ask.method(), ask.params(), opts)?;
        Ok(Asked::Sent(id))
    }
}
