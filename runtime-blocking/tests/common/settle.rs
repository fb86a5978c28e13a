//! Waiting for a reading of the process's state to hold still.

use std::time::{Duration, Instant};

/// `read` once it gives the same value twice, `hold` apart, or its last value after 5 s.
pub(crate) fn settled<T: PartialEq>(hold: Duration, mut read: impl FnMut() -> T) -> T {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut last = read();
    loop {
        std::thread::sleep(hold);
        let now = read();
        if now == last || Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}
