//! A server handler's run as a future whose panics become an answer: a handler that panics
//! must neither leave its request unanswered nor take its session down.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::error::Rejection;
use crate::handler::BoxFuture;
use crate::jsonrpc::{ErrorObject, RawJson};

/// A handler's answer: its result, or the error sent for it.
pub type Answer = Result<RawJson, ErrorObject>;

/// A running handler (or client handler) whose panic, in the call that starts it or in any
/// poll, is answered with an internal error naming the panic's message.
pub struct Answering {
    work: Option<BoxFuture<'static, Answer>>,
    /// The answer of a start that panicked.
    failed: Option<ErrorObject>,
}

impl Answering {
    /// Starts the handler by calling `start` (a panic there is caught too).
    pub fn start(start: impl FnOnce() -> BoxFuture<'static, Answer>) -> Self {
        match catch_unwind(AssertUnwindSafe(start)) {
            Ok(work) => Self { work: Some(work), failed: None },
            Err(panic) => Self { work: None, failed: Some(panicked(&*panic)) },
        }
    }

    /// Polls once with a waker that does nothing: the answer of a handler that is done at
    /// once (most are), answered without a task; `Pending` for one to move into a task,
    /// whose first poll there registers its waker.
    pub fn poll_once(&mut self) -> Poll<Answer> {
        Pin::new(self).poll(&mut Context::from_waker(Waker::noop()))
    }
}

impl Future for Answering {
    type Output = Answer;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Answer> {
        if let Some(error) = self.failed.take() {
            return Poll::Ready(Err(error));
        }
        let Some(work) = self.work.as_mut() else {
            return Poll::Ready(Err(panicked(&"the handler was polled after it answered")));
        };
        match catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx))) {
            Ok(Poll::Ready(answer)) => {
                self.work = None;
                Poll::Ready(answer)
            }
            Ok(Poll::Pending) => Poll::Pending,
            Err(panic) => {
                self.work = None;
                Poll::Ready(Err(panicked(&*panic)))
            }
        }
    }
}

/// Runs a blocking handler on this thread; a panic is answered with an internal error.
pub fn answer_caught(run: impl FnOnce() -> Answer) -> Answer {
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|panic| Err(panicked(&*panic)))
}

/// The answer to a handler that panicked with `payload`.
pub fn panicked(payload: &(dyn Any + Send)) -> ErrorObject {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".to_owned());
    Rejection::Internal(format!("the handler panicked: {what}")).to_jsonrpc()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_while_starting_or_polling_is_answered() {
        let mut at_start = Answering::start(|| panic!("at start"));
        let Poll::Ready(Err(e)) = at_start.poll_once() else { panic!("not answered") };
        assert_eq!(e.message, "internal error: the handler panicked: at start");
        let mut in_poll = Answering::start(|| Box::pin(async { panic!("in {}", "poll") }));
        let Poll::Ready(Err(e)) = in_poll.poll_once() else { panic!("not answered") };
        assert!(e.message.ends_with("the handler panicked: in poll"), "{e:?}");
    }

    #[test]
    fn a_handler_done_at_once_answers_in_its_first_poll() {
        let mut work = Answering::start(|| Box::pin(async { Ok(RawJson::from_serialize(&1)) }));
        assert!(matches!(work.poll_once(), Poll::Ready(Ok(_))));
    }
}
