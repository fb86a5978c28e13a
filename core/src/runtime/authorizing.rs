//! The OAuth authorization handler's run, on any runtime: its answer, or why there is none
//! (a panic included), always comes back, since the session's requests wait for it.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use super::{panicked, ClientCommand};
use crate::handler::{AsyncClientHandlers, BoxFuture, SyncClientHandlers};

type Verdict = Result<String, String>;

/// The async handler's run for `url`, ending in the command that answers the machine.
pub fn authorization<R: Send + 'static>(
    handlers: &AsyncClientHandlers,
    url: String,
) -> BoxFuture<'static, ClientCommand<R>> {
    let work = catch_unwind(AssertUnwindSafe(|| handlers.authorize(url)));
    Box::pin(async move {
        let verdict = match work {
            Ok(work) => Caught(work).await,
            Err(panic) => Err(panicked(&*panic).message),
        };
        ClientCommand::Authorized(verdict)
    })
}

/// The blocking handler's run for `url` on this thread.
pub fn authorization_blocking(handlers: &SyncClientHandlers, url: String) -> Verdict {
    catch_unwind(AssertUnwindSafe(|| handlers.authorize(url)))
        .unwrap_or_else(|panic| Err(panicked(&*panic).message))
}

struct Caught(BoxFuture<'static, Verdict>);

impl Future for Caught {
    type Output = Verdict;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Verdict> {
        match catch_unwind(AssertUnwindSafe(|| self.0.as_mut().poll(cx))) {
            Ok(poll) => poll,
            Err(panic) => Poll::Ready(Err(panicked(&*panic).message)),
        }
    }
}
