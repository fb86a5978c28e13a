//! What a client session's handles (and its handler tasks) ask of its loop, and how the loop
//! applies each to the machine: one enum and one `apply` for every runtime.

use std::time::Instant;

use super::{CallKey, ClientDispatch, ReplySlot};
use crate::api::ProgressFn;
use crate::client::Client;
use crate::jsonrpc::{ErrorObject, RawJson, RequestId};
use crate::RequestOptions;

/// A request a handle asks its session's loop to send; its one outcome goes to `reply`.
pub struct OutgoingCall<R> {
    /// The caller's name for it, to cancel it by.
    pub key: CallKey,
    /// The JSON-RPC method.
    pub method: &'static str,
    /// The params, already encoded.
    pub params: Option<RawJson>,
    /// Timeout and progress settings.
    pub opts: RequestOptions,
    /// Called with each progress notification, if any.
    pub on_progress: Option<ProgressFn>,
    /// Where the outcome goes.
    pub reply: R,
}

/// One command to a client session's loop.
pub enum ClientCommand<R> {
    /// Send a request.
    Call(OutgoingCall<R>),
    /// The caller of the request with this key stopped waiting: cancel it.
    Cancel(CallKey),
    /// End the session (`close`, or the last handle was dropped).
    Close,
    /// The app replaced its roots (`Client::set_roots`): tell the server.
    RootsChanged,
    /// The authorization handler answered: the whole redirect URL, or why nobody will
    /// authorize.
    Authorized(Result<String, String>),
    /// What the shared token cache holds, for `ClientStep::LoadTokens`.
    CachedTokens(Option<crate::auth::Tokens>),
    /// A client handler answered the server's request `id`.
    Respond {
        /// The server's request.
        id: RequestId,
        /// The handler's answer.
        result: Result<RawJson, ErrorObject>,
    },
}

/// Why a request is cancelled when its caller stops waiting, on every runtime.
pub const CALLER_STOPPED_WAITING: &str = "the caller stopped waiting";

impl<R: ReplySlot, T> ClientDispatch<R, T> {
    /// Applies `command` to `client` at `now`. A command the machine refuses because the
    /// session is over, or whose request is already decided, has nothing left to do; a call
    /// refused fails its caller (see [`ClientDispatch::start`]).
    pub fn apply(&mut self, client: &mut Client, now: Instant, command: ClientCommand<R>) {
        match command {
            ClientCommand::Call(OutgoingCall { key, method, params, opts, on_progress, reply }) => {
                let send = || client.request(now, method, params, opts);
                self.start(Some(key), reply, on_progress, send);
            }
            ClientCommand::Cancel(key) => {
                if let Some(id) = self.abandon(key) {
                    // Err only if the outcome was already decided; nothing to cancel then.
                    let _ = client.cancel(now, &id, Some(CALLER_STOPPED_WAITING));
                }
            }
            ClientCommand::Close => client.close(now),
            // Err only once the session is closed; nobody is left to tell.
            ClientCommand::RootsChanged => drop(client.roots_changed(now)),
            ClientCommand::Authorized(answer) => {
                self.authorized();
                match answer {
                    // Err when no authorization is awaited (the flow moved on): nothing to do.
                    Ok(redirect) => drop(client.authorize(now, &redirect)),
                    Err(why) => client.refuse_authorization(now, why),
                }
            }
            // Err when nothing asked for them (the flow moved on): nothing to do.
            ClientCommand::CachedTokens(tokens) => drop(client.cached_tokens(now, tokens)),
            ClientCommand::Respond { id, result } => {
                self.answered(&id);
                // Err only if the session closed meanwhile; then nobody awaits the answer.
                let _ = client.respond(now, id, result);
            }
        }
    }
}
