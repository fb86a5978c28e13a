//! The stdio server: one driver loop per session, each request's handler in a task of its
//! own, and a [`RequestContext`] through which handlers report progress, log and ask the
//! client (sampling, elicitation, roots).

mod driver;
mod stdio;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};
use zest_core::api::{CallError, PeerApi};
use zest_core::client::decode_result;
use zest_core::error::{CloseReason, UsageError};
use zest_core::handler::{AsyncHandler, BoxFuture};
use zest_core::jsonrpc::{RawJson, RequestId};
use zest_core::schema::methods::Method;
use zest_core::schema::LoggingLevel;
use zest_core::server::ServerConfig;

use crate::calls::{self, Keys};
use driver::{Command, Driver};

/// What a server offers, with async handlers taking a [`RequestContext`]:
/// `registry.tool(tool, |ctx, params| async move { … })`.
pub type Registry = zest_core::server::Registry<AsyncHandler<RequestContext>>;

/// Serves one MCP session on this process's stdin and stdout until stdin ends; returns why
/// the session ended. Nothing but protocol frames is written to stdout.
///
/// When stdin and stdout are pipes (as when a client spawned this process) they are switched
/// to non-blocking mode and driven by tokio's reactor for the session, then switched back.
pub async fn serve_stdio(config: ServerConfig, registry: Registry) -> CloseReason {
    let (reader, writer, _restore) = stdio::open();
    serve(config, registry, reader, writer).await
}

/// Serves one MCP session over any byte streams (newline-delimited JSON-RPC) until `reader`
/// ends or fails; returns why the session ended. Every frame is flushed as it is written.
///
/// Handlers run concurrently, each in a task of its own; a request the client cancels has
/// its task aborted. On a current-thread runtime a handler is first polled once in the
/// session's loop, and one that is done then is answered without a task (it could not have
/// run beside the loop anyway); on a multi-thread runtime every handler gets its task at
/// once. Must be called within a tokio runtime (either flavour).
pub async fn serve<R, W>(
    config: ServerConfig,
    registry: Registry,
    reader: R,
    writer: W,
) -> CloseReason
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    Driver::new(config, registry).run(reader, writer).await
}

/// What a handler gets with its request: who it is, whether it was cancelled, and a line to
/// the session for progress, logging and requests to the client.
#[derive(Clone)]
pub struct RequestContext {
    id: RequestId,
    cancelled: Arc<AtomicBool>,
    link: Arc<Link>,
}

/// The session's command line, shared by every context of one session.
struct Link {
    commands: mpsc::UnboundedSender<Command>,
    keys: Keys,
}

impl RequestContext {
    /// The client's id for this request.
    pub fn request_id(&self) -> &RequestId {
        &self.id
    }

    /// True once the client cancelled this request (or the session ended). The handler's task
    /// is aborted at its next `.await` as well; this is for work between awaits or in tasks
    /// the handler spawned.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Reports progress if the client asked for it (otherwise does nothing). `progress` must
    /// increase from one report to the next.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), UsageError> {
        let id = self.id.clone();
        self.ask(|reply| Command::Progress { id, progress, total, message, reply }).await
    }

    /// Sends a log record (`notifications/message`) if `level` is at or above what the
    /// client set.
    pub async fn log(&self, level: LoggingLevel, data: Value) -> Result<(), UsageError> {
        let related = self.id.clone();
        self.ask(|reply| Command::Log { related, level, data, reply }).await
    }

    async fn ask(
        &self,
        command: impl FnOnce(oneshot::Sender<Result<(), UsageError>>) -> Command,
    ) -> Result<(), UsageError> {
        let (reply, rx) = oneshot::channel();
        self.link.commands.send(command(reply)).map_err(|_| UsageError::Closed)?;
        rx.await.unwrap_or(Err(UsageError::Closed))
    }
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext")
            .field("id", &self.id)
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl PeerApi for RequestContext {
    type Call<'a, T: 'a> = BoxFuture<'a, Result<T, CallError>>;

    /// Sends a request to the client; dropping the future early (or the handler's task being
    /// aborted) cancels it.
    fn peer_request<M: Method>(&self, params: M::Params) -> Self::Call<'_, M::Result>
    where
        M::Result: 'static,
    {
        let params = RawJson::from_serialize(&params);
        Box::pin(async move {
            let key = self.link.keys.next();
            let (reply, rx) = oneshot::channel();
            let related = self.id.clone();
            let command = Command::Request { key, related, method: M::NAME, params, reply };
            if self.link.commands.send(command).is_err() {
                return Err(CallError::Usage(UsageError::Closed));
            }
            let raw = calls::outcome(rx, || {
                // After the session ended there is nothing left to cancel.
                let _ = self.link.commands.send(Command::Cancel { key });
            })
            .await?;
            decode_result::<M>(Ok(raw)).map_err(CallError::Request)
        })
    }
}
