use std::time::Duration;

use quickcheck::quickcheck;

use super::*;
use crate::testkit::VirtualClock;

fn frame(text: &str) -> Bytes {
    Bytes::copy_from_slice(text.as_bytes())
}

/// Writes through `queue` as a sink taking at most `max` bytes per write would, until the
/// queue is idle or done; returns what the sink received.
fn drive(queue: &mut WriteQueue, max: usize) -> Vec<u8> {
    let mut sink = Vec::new();
    loop {
        match queue.poll_step() {
            WriteStep::Write(bytes) => {
                let n = bytes.len().min(max);
                sink.extend_from_slice(&bytes[..n]);
                queue.handle_written(n);
            }
            WriteStep::Flush => queue.handle_flushed(),
            WriteStep::Close => queue.handle_closed(),
            WriteStep::Idle | WriteStep::Done => return sink,
        }
    }
}

#[test]
fn the_frames_of_one_drain_leave_in_one_write_then_one_flush() {
    let mut queue = WriteQueue::new();
    assert_eq!(queue.poll_step(), WriteStep::Idle);
    assert!(!queue.is_busy());
    queue.push(frame("{\"a\":1}\n"));
    queue.push(frame("{\"b\":2}\n"));
    assert!(queue.is_busy());
    assert_eq!(queue.poll_step(), WriteStep::Write(frame("{\"a\":1}\n{\"b\":2}\n")));
    queue.handle_written(16);
    assert!(queue.is_empty());
    assert_eq!(queue.poll_step(), WriteStep::Flush, "every batch is flushed once written");
    queue.handle_flushed();
    assert_eq!(queue.poll_step(), WriteStep::Idle);
    assert!(!queue.is_busy());
}

#[test]
fn a_partial_write_resumes_where_it_stopped() {
    let mut queue = WriteQueue::new();
    queue.push(frame("hello "));
    queue.push(frame("world\n"));
    let WriteStep::Write(first) = queue.poll_step() else { panic!("bytes are queued") };
    assert_eq!(first, frame("hello world\n"));
    queue.handle_written(3);
    assert_eq!(queue.len(), 9);
    // More frames queued meanwhile join the rest of the batch, in order.
    queue.push(frame("again\n"));
    assert_eq!(queue.poll_step(), WriteStep::Write(frame("lo world\nagain\n")));
    queue.handle_written(15);
    assert_eq!(queue.poll_step(), WriteStep::Flush);
}

#[test]
fn a_large_frame_is_handed_out_without_a_copy() {
    let mut queue = WriteQueue::new();
    let big = Bytes::from(vec![b'x'; WriteQueue::COALESCE_LIMIT + 1]);
    queue.push(big.clone());
    queue.push(frame("small\n"));
    let WriteStep::Write(out) = queue.poll_step() else { panic!("bytes are queued") };
    assert_eq!(out.as_ptr(), big.as_ptr(), "the frame itself, not a copy");
    assert_eq!(out.len(), big.len(), "the small frame waits for the next write");
    queue.handle_written(out.len());
    assert_eq!(queue.poll_step(), WriteStep::Write(frame("small\n")));
}

#[test]
fn small_frames_are_joined_up_to_the_limit() {
    let mut queue = WriteQueue::new();
    let piece = Bytes::from(vec![b'y'; WriteQueue::COALESCE_LIMIT / 4]);
    for _ in 0..6 {
        queue.push(piece.clone());
    }
    let WriteStep::Write(out) = queue.poll_step() else { panic!("bytes are queued") };
    assert_eq!(out.len(), WriteQueue::COALESCE_LIMIT);
    queue.handle_written(out.len());
    let WriteStep::Write(out) = queue.poll_step() else { panic!("bytes are queued") };
    assert_eq!(out.len(), 2 * piece.len());
}

#[test]
fn close_waits_for_the_queue_to_drain_and_drops_later_frames() {
    let mut queue = WriteQueue::new();
    queue.push(frame("last\n"));
    queue.close();
    assert!(queue.is_closing());
    queue.push(frame("too late\n"));
    assert_eq!(queue.poll_step(), WriteStep::Write(frame("last\n")));
    queue.handle_written(2);
    assert_eq!(queue.poll_step(), WriteStep::Write(frame("st\n")), "not closed while bytes wait");
    queue.handle_written(3);
    assert_eq!(queue.poll_step(), WriteStep::Flush);
    queue.handle_flushed();
    assert_eq!(queue.poll_step(), WriteStep::Close);
    queue.handle_closed();
    assert_eq!(queue.poll_step(), WriteStep::Done);
    assert_eq!(queue.ended(), Some(WriteEnd::Closed));
    assert!(!queue.is_busy());
}

#[test]
fn closing_an_empty_queue_closes_at_once() {
    let mut queue = WriteQueue::new();
    queue.close();
    assert!(queue.is_busy());
    assert_eq!(queue.poll_step(), WriteStep::Close);
}

#[test]
fn the_drain_deadline_gives_up_on_a_sink_that_takes_nothing() {
    let start = VirtualClock::new().now();
    let deadline = start + Duration::from_secs(5);
    let mut queue = WriteQueue::new();
    queue.push(frame("stuck\n"));
    assert_eq!(queue.poll_timeout(), None, "no deadline while the session runs");
    queue.finish(deadline);
    assert_eq!(queue.poll_timeout(), Some(deadline));
    queue.handle_timeout(start + Duration::from_secs(4));
    assert_eq!(
        queue.poll_step(),
        WriteStep::Write(frame("stuck\n")),
        "an early timeout is harmless"
    );
    queue.handle_timeout(deadline);
    assert_eq!(queue.poll_step(), WriteStep::Done);
    assert_eq!(queue.ended(), Some(WriteEnd::TimedOut));
    assert!(queue.is_empty());
    assert_eq!(queue.poll_timeout(), None);
    queue.handle_written(6); // a write that was in progress reports late: ignored
    assert_eq!(queue.ended(), Some(WriteEnd::TimedOut));
}

#[test]
fn the_earlier_deadline_wins_and_a_drained_queue_ignores_it() {
    let start = VirtualClock::new().now();
    let mut queue = WriteQueue::new();
    queue.finish(start + Duration::from_secs(2));
    queue.finish(start + Duration::from_secs(9));
    assert_eq!(queue.poll_timeout(), Some(start + Duration::from_secs(2)));
    assert_eq!(queue.poll_step(), WriteStep::Close);
    queue.handle_closed();
    queue.handle_timeout(start + Duration::from_secs(3));
    assert_eq!(queue.ended(), Some(WriteEnd::Closed), "closed in time stays closed");
}

#[test]
fn a_failure_drops_what_is_queued_and_what_comes_later() {
    let mut queue = WriteQueue::new();
    queue.push(frame("lost\n"));
    queue.handle_failed();
    queue.push(frame("also lost\n"));
    assert_eq!(queue.poll_step(), WriteStep::Done);
    assert_eq!(queue.ended(), Some(WriteEnd::Failed));
    assert!(queue.is_empty());
    queue.finish(VirtualClock::new().now());
    assert_eq!(queue.poll_timeout(), None, "a done queue has no deadline");
}

#[test]
fn slices_cover_every_unwritten_frame_for_a_vectored_write() {
    let mut queue = WriteQueue::new();
    queue.push(frame("ab"));
    queue.push(frame("cd"));
    queue.push(frame("ef"));
    let mut dst = [IoSlice::new(&[]); 2];
    assert_eq!(queue.slices(&mut dst), 2);
    assert_eq!((&*dst[0], &*dst[1]), (&b"ab"[..], &b"cd"[..]));
    queue.handle_written(3); // across a frame boundary
    let mut dst = [IoSlice::new(&[]); 4];
    assert_eq!(queue.slices(&mut dst), 2);
    assert_eq!((&*dst[0], &*dst[1]), (&b"d"[..], &b"ef"[..]));
}

quickcheck! {
    /// Whatever the frames and however little the sink takes per write, it receives exactly
    /// the frames' bytes, in order, and the queue ends empty and flushed.
    fn every_split_delivers_the_frames_in_order(frames: Vec<Vec<u8>>, max: u8) -> bool {
        let max = usize::from(max).max(1);
        let mut queue = WriteQueue::new();
        let (mut expected, mut written) = (Vec::new(), Vec::new());
        for (i, f) in frames.iter().enumerate() {
            queue.push(Bytes::from(f.clone()));
            expected.extend_from_slice(f);
            if i % 3 == 0 {
                // Write part of the way between pushes, as a loop would.
                written.extend(drive(&mut queue, max));
            }
        }
        written.extend(drive(&mut queue, max));
        written == expected && queue.is_empty() && queue.poll_step() == WriteStep::Idle
    }
}

/// Writes a large frame through `queue` in three writes, dropping each handed-out `Bytes`
/// before reporting it, as the runtimes do.
fn write_large(queue: &mut WriteQueue, len: usize) -> *const u8 {
    let frame = Bytes::from(vec![b'x'; len]);
    let ptr = frame.as_ptr();
    queue.push(frame);
    while let WriteStep::Write(bytes) = queue.poll_step() {
        let n = bytes.len().min(len / 3 + 1);
        drop(bytes);
        queue.handle_written(n);
    }
    ptr
}

#[test]
fn a_recycling_queue_keeps_the_largest_written_frames_buffer() {
    let mut queue = WriteQueue::recycling();
    let ptr = write_large(&mut queue, 100 * 1024);
    let spare = queue.take_spare().expect("a large written frame's buffer");
    assert!(spare.is_empty() && spare.capacity() >= 100 * 1024);
    assert_eq!(spare.as_ptr(), ptr, "the frame's own buffer, not a copy");
    assert!(queue.take_spare().is_none(), "taken once");
    // Small frames are not worth keeping; a plain queue keeps nothing.
    write_large(&mut queue, 1024);
    assert!(queue.take_spare().is_none());
    let mut plain = WriteQueue::new();
    write_large(&mut plain, 100 * 1024);
    assert!(plain.take_spare().is_none());
}

#[test]
fn a_frame_whose_bytes_are_still_held_elsewhere_is_not_kept() {
    let mut queue = WriteQueue::recycling();
    let frame = Bytes::from(vec![b'y'; 100 * 1024]);
    let held = frame.clone();
    queue.push(frame);
    let WriteStep::Write(bytes) = queue.poll_step() else { panic!("a write") };
    queue.handle_written(bytes.len());
    assert!(queue.take_spare().is_none(), "its bytes are still read elsewhere");
    assert_eq!(held.len(), 100 * 1024);
}

#[test]
fn a_write_result_is_progress_a_retry_or_the_failure_that_ends_the_stream() {
    let mut queue = WriteQueue::new();
    queue.push(frame("abcdef"));
    let _ = queue.poll_step();
    assert!(queue.handle_write_result(Ok(2)).is_ok());
    assert_eq!(queue.poll_step(), WriteStep::Write(frame("cdef")));
    let interrupted = io::Error::from(io::ErrorKind::Interrupted);
    assert!(queue.handle_write_result(Err(interrupted)).is_ok());
    assert_eq!(queue.poll_step(), WriteStep::Write(frame("cdef")), "nothing taken");
    let zero = queue.handle_write_result(Ok(0)).unwrap_err();
    assert_eq!(zero.kind(), io::ErrorKind::WriteZero);
    let broken = io::Error::from(io::ErrorKind::BrokenPipe);
    assert_eq!(
        queue.handle_write_result(Err(broken)).unwrap_err().kind(),
        io::ErrorKind::BrokenPipe
    );
    assert_eq!(queue.poll_step(), WriteStep::Write(frame("cdef")), "failing is the runtime's");
}

#[test]
fn a_backlog_is_what_waits_besides_its_largest_frame() {
    let mut queue = WriteQueue::new();
    // One frame, however large, is never a backlog: a reader gets it. Nor are small ones
    // beside it (an SSE stream's priming event and a log line before a large result).
    queue.push(Bytes::from(vec![b'x'; 10]));
    queue.push(Bytes::from(vec![b'y'; 1000]));
    queue.push(Bytes::from(vec![b'z'; 10]));
    assert!(!queue.is_backlogged(20));
    assert!(queue.is_backlogged(19));
    // What piles up beside it while nothing is written is.
    queue.push(Bytes::from(vec![b'w'; 500]));
    assert!(queue.is_backlogged(519));
    assert!(!queue.is_backlogged(520), "at the limit is still within it");
    // Written bytes count no more; the largest is still the largest seen meanwhile.
    queue.handle_written(510);
    assert!(queue.is_backlogged(9));
    assert!(!queue.is_backlogged(10));
    // Once everything is written, the next burst is weighed on its own.
    queue.handle_written(usize::MAX);
    queue.push(Bytes::from(vec![b'v'; 100]));
    queue.push(Bytes::from(vec![b'u'; 60]));
    assert!(queue.is_backlogged(59));
    assert!(!backlog_exceeds(1000, 1000, 0));
    assert!(backlog_exceeds(1011, 1000, 10));
}

#[test]
fn a_peer_past_the_limit_is_held_while_it_reads_and_cut_off_once_it_stops() {
    use crate::runtime::{Backlog, BacklogWatch, BACKLOG_STALL};
    let mut clock = VirtualClock::new();
    let mut queue = WriteQueue::new();
    let mut watch = BacklogWatch::new(100);
    for _ in 0..3 {
        queue.push(Bytes::from(vec![b'x'; 80]));
    }
    // 160 bytes besides the largest: past the limit, held for the stall time from now.
    let start = clock.now();
    assert_eq!(watch.check(&queue, start), Backlog::Holding(start + BACKLOG_STALL));
    clock.advance(BACKLOG_STALL - Duration::from_millis(1));
    assert_eq!(watch.check(&queue, clock.now()), Backlog::Holding(start + BACKLOG_STALL));
    // The peer took a few bytes: it reads, so the stall time starts again.
    queue.handle_written(10);
    let taken_at = clock.now();
    assert_eq!(watch.check(&queue, taken_at), Backlog::Holding(taken_at + BACKLOG_STALL));
    clock.advance(BACKLOG_STALL);
    assert_eq!(watch.check(&queue, clock.now()), Backlog::Stalled, "nothing taken since");
    // Within the limit again, it is clear, and a later backlog is weighed afresh.
    queue.handle_written(100);
    assert_eq!(watch.check(&queue, clock.now()), Backlog::Clear);
    queue.push(Bytes::from(vec![b'y'; 80]));
    queue.push(Bytes::from(vec![b'z'; 80]));
    let later = clock.now();
    assert_eq!(watch.check(&queue, later), Backlog::Holding(later + BACKLOG_STALL));
    assert_eq!(queue.taken(), 110);
}
