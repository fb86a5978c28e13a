use std::cell::RefCell;
use std::future::{pending, ready, Future};
use std::io;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;

use super::{PollSink, Writer};
use crate::testkit::VirtualClock;

/// What a [`ScriptedSink`] saw, shared with the test after the writer dropped it.
#[derive(Default)]
struct Seen {
    writes: Vec<Vec<u8>>,
    flushes: usize,
    closed: bool,
    dropped: bool,
}

/// A sink that takes `room` bytes, then pends; or fails every write.
struct ScriptedSink {
    room: Rc<RefCell<usize>>,
    fail: bool,
    seen: Rc<RefCell<Seen>>,
}

impl PollSink for ScriptedSink {
    fn poll_write(&mut self, _: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        if self.fail {
            return Poll::Ready(Err(io::Error::from(io::ErrorKind::BrokenPipe)));
        }
        let mut room = self.room.borrow_mut();
        let n = buf.len().min(*room);
        if n == 0 {
            return Poll::Pending;
        }
        *room -= n;
        self.seen.borrow_mut().writes.push(buf[..n].to_vec());
        Poll::Ready(Ok(n))
    }

    fn poll_flush(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.seen.borrow_mut().flushes += 1;
        Poll::Ready(Ok(()))
    }

    fn poll_close(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.seen.borrow_mut().closed = true;
        Poll::Ready(Ok(()))
    }
}

impl Drop for ScriptedSink {
    fn drop(&mut self) {
        self.seen.borrow_mut().dropped = true;
    }
}

fn sink(room: usize, fail: bool) -> (Writer<ScriptedSink>, Rc<RefCell<usize>>, Rc<RefCell<Seen>>) {
    let room = Rc::new(RefCell::new(room));
    let seen = Rc::new(RefCell::new(Seen::default()));
    let sink = ScriptedSink { room: room.clone(), fail, seen: seen.clone() };
    (Writer::new(sink), room, seen)
}

/// Polls `f` once; the scripted sink never needs a second poll to be woken.
fn poll_once<T>(f: impl Future<Output = T>) -> Poll<T> {
    pin!(f).poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn the_frames_of_one_drain_leave_in_one_write_and_one_flush() {
    let (mut writer, _, seen) = sink(1 << 20, false);
    for frame in ["a\n", "bb\n", "ccc\n"] {
        writer.send(Bytes::from_static(frame.as_bytes()));
    }
    writer.try_progress();
    let seen = seen.borrow();
    assert_eq!(seen.writes, vec![b"a\nbb\nccc\n".to_vec()]);
    assert_eq!(seen.flushes, 1);
    assert!(!writer.busy());
}

#[test]
fn what_the_sink_does_not_take_waits_for_progress() {
    let (mut writer, room, seen) = sink(4, false);
    writer.send(Bytes::from_static(b"0123456789\n"));
    writer.try_progress();
    assert!(writer.busy(), "7 bytes are still queued");
    assert!(poll_once(writer.progress()).is_pending());
    *room.borrow_mut() = 100;
    assert!(matches!(poll_once(writer.progress()), Poll::Ready(Ok(()))));
    assert_eq!(seen.borrow().writes.concat(), b"0123456789\n");
    assert!(!writer.busy());
}

#[test]
fn a_write_failure_is_reported_once_and_later_frames_are_dropped() {
    let (mut writer, _, seen) = sink(0, true);
    writer.send(Bytes::from_static(b"x\n"));
    writer.try_progress();
    assert!(writer.busy(), "the failure waits to be reported");
    assert!(seen.borrow().dropped, "a failed sink is let go at once");
    let Poll::Ready(Err(e)) = poll_once(writer.progress()) else { panic!("no failure") };
    assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    writer.send(Bytes::from_static(b"y\n"));
    assert!(!writer.busy());
    assert!(matches!(poll_once(writer.progress()), Poll::Ready(Ok(()))));
}

#[test]
fn finish_writes_what_is_queued_then_closes_the_sink() {
    let (mut writer, _, seen) = sink(1 << 20, false);
    writer.send(Bytes::from_static(b"last\n"));
    let deadline = VirtualClock::new().now() + Duration::from_secs(2);
    assert!(poll_once(writer.finish(deadline, |_| pending::<()>())).is_ready());
    let seen = seen.borrow();
    assert_eq!(seen.writes, vec![b"last\n".to_vec()]);
    assert!(seen.closed && seen.dropped);
}

#[test]
fn finish_gives_up_at_its_deadline_and_drops_the_sink_unclosed() {
    let (mut writer, _, seen) = sink(0, false);
    writer.send(Bytes::from_static(b"never taken\n"));
    let deadline = VirtualClock::new().now() + Duration::from_secs(2);
    let mut asked_for = None;
    let timer = |at| {
        asked_for = Some(at);
        ready(())
    };
    assert!(poll_once(writer.finish(deadline, timer)).is_ready());
    assert_eq!(asked_for, Some(deadline));
    let seen = seen.borrow();
    assert!(seen.writes.is_empty());
    assert!(!seen.closed && seen.dropped);
}

#[test]
fn abandon_drops_the_queue_and_the_sink() {
    let (mut writer, _, seen) = sink(0, false);
    writer.send(Bytes::from_static(b"x\n"));
    writer.abandon();
    assert!(!writer.busy());
    assert!(seen.borrow().dropped);
}
