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

/// Texts shorter than this get memory of their exact size and never come here.
pub const KEPT_TEXT_MIN: usize = 64 * 1024;

/// How many buffers the pool keeps at most.
pub const KEPT_TEXTS_MAX: usize = 4;

static POOL: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// An empty buffer that holds `len` bytes without growing: the smallest kept one that is
/// large enough, or fresh memory of exactly `len` bytes.
pub(crate) fn buffer_for(len: usize) -> String {
    if len >= KEPT_TEXT_MIN {
        let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        let fits = pool.iter().enumerate().filter(|(_, b)| b.capacity() >= len);
        if let Some((at, _)) = fits.min_by_key(|(_, b)| b.capacity()) {
            let mut buf = pool.swap_remove(at);
            buf.clear();
            return buf;
        }
    }
    String::with_capacity(len)
}

/// Keeps `buf` for a later text, within the bounds above.
pub(crate) fn give_back(buf: String) {
    let capacity = buf.capacity();
    if !(KEPT_TEXT_MIN..=KEPT_BUFFER_MAX).contains(&capacity) {
        return;
    }
    let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    if pool.len() < KEPT_TEXTS_MAX {
        pool.push(buf);
        return;
    }
    let smallest = pool.iter().enumerate().min_by_key(|(_, b)| b.capacity());
    if let Some((at, kept)) = smallest {
        if kept.capacity() < capacity {
            // The smaller one is freed after the lock is released.
            let freed = std::mem::replace(&mut pool[at], buf);
            drop(pool);
            drop(freed);
        }
    }
}
