//! The buffers of large JSON texts, kept for the next large text.
//!
//! A 1 MiB call holds a few texts of its size at once (on a client: the params it sends and
//! the result it receives; on a server: the params it receives and the result it sends). When
//! each was fresh memory and freed after the call, glibc gave the freed top of the heap back
//! to the OS and faulted it in again on the next call: a fifth of a client's time at 1 MiB.
//! A [`RawJson`](super::RawJson) text of [`KEPT_TEXT_MIN`] bytes or more goes back here when its
//! last holder drops it, and the next large text is copied into it.
//!
//! Bounded: at most [`KEPT_TEXTS_MAX`] buffers, each at most
//! [`KEPT_BUFFER_MAX`](crate::framing::KEPT_BUFFER_MAX), for the whole process; a buffer that
//! finds the pool full replaces the smallest kept one if it is larger, and is freed otherwise.

use std::sync::{Mutex, PoisonError};

use crate::framing::KEPT_BUFFER_MAX;

/// Texts shorter than this are copied into memory of their exact size and never come here.
pub const KEPT_TEXT_MIN: usize = 64 * 1024;

/// How many buffers the pool keeps at most.
pub const KEPT_TEXTS_MAX: usize = 4;

static POOL: Mutex<Pool> = Mutex::new(Pool(Vec::new()));

/// An empty buffer that holds `len` bytes without growing: the smallest kept one that is
/// large enough and at most twice that (a small text does not hold a large buffer for as
/// long as it lives), or fresh memory of exactly `len` bytes.
pub(crate) fn buffer_for(len: usize) -> String {
    if len >= KEPT_TEXT_MIN {
        if let Some(buf) = POOL.lock().unwrap_or_else(PoisonError::into_inner).take(len) {
            return buf;
        }
    }
    String::with_capacity(len)
}

/// Keeps `buf` for a later text, within the bounds above.
pub(crate) fn give_back(buf: String) {
    if (KEPT_TEXT_MIN..=KEPT_BUFFER_MAX).contains(&buf.capacity()) {
        let freed = POOL.lock().unwrap_or_else(PoisonError::into_inner).give(buf);
        // Freed after the lock is released.
        drop(freed);
    }
}

/// The kept buffers.
struct Pool(Vec<String>);

impl Pool {
    /// The smallest buffer of `len` to `2 * len` bytes, emptied.
    fn take(&mut self, len: usize) -> Option<String> {
        let fits = |b: &String| (len..=len.saturating_mul(2)).contains(&b.capacity());
        let fitting = self.0.iter().enumerate().filter(|(_, b)| fits(b));
        let (at, _) = fitting.min_by_key(|(_, b)| b.capacity())?;
        let mut buf = self.0.swap_remove(at);
        buf.clear();
        Some(buf)
    }

    /// Keeps `buf`, in place of the smallest kept one if the pool is full and that is
    /// smaller; returns the buffer it does not keep.
    fn give(&mut self, buf: String) -> Option<String> {
        if self.0.len() < KEPT_TEXTS_MAX {
            self.0.push(buf);
            return None;
        }
        let (at, smallest) = self.0.iter().enumerate().min_by_key(|(_, b)| b.capacity())?;
        if smallest.capacity() >= buf.capacity() {
            return Some(buf);
        }
        Some(std::mem::replace(&mut self.0[at], buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: usize = 1024;

    fn capacities(pool: &Pool) -> Vec<usize> {
        let mut kept: Vec<usize> = pool.0.iter().map(String::capacity).collect();
        kept.sort_unstable();
        kept
    }

    #[test]
    fn a_full_pool_keeps_the_largest_buffers() {
        let mut pool = Pool(Vec::new());
        for size in [100, 400, 200, 300] {
            assert!(pool.give(String::with_capacity(size * KIB)).is_none());
        }
        let refused = pool.give(String::with_capacity(80 * KIB)).expect("full");
        assert_eq!(refused.capacity(), 80 * KIB, "smaller than every kept one");
        let freed = pool.give(String::with_capacity(500 * KIB)).expect("full");
        assert_eq!(freed.capacity(), 100 * KIB, "the smallest makes room");
        assert_eq!(capacities(&pool), [200 * KIB, 300 * KIB, 400 * KIB, 500 * KIB]);
    }

    #[test]
    fn a_text_takes_the_smallest_buffer_that_fits_and_no_larger_than_twice_its_size() {
        let mut pool = Pool(Vec::new());
        for size in [1024, 300, 180] {
            pool.give(String::from("x").repeat(size * KIB));
        }
        let taken = pool.take(150 * KIB).expect("180 KiB fits 150 KiB");
        assert_eq!((taken.capacity(), taken.len()), (180 * KIB, 0), "the smallest, emptied");
        assert!(pool.take(100 * KIB).is_none(), "300 KiB is more than twice 100 KiB");
        assert!(pool.take(2048 * KIB).is_none(), "none is large enough");
        assert_eq!(pool.take(600 * KIB).map(|b| b.capacity()), Some(1024 * KIB));
        assert_eq!(capacities(&pool), [300 * KIB]);
    }
}
