//! A socket's read timeout, set again only when a loop wants one that differs by more than
//! its wait can bear: a `setsockopt` per read costs more than the timing it buys.

use std::net::TcpStream;
use std::time::Duration;

/// The read timeout last set on one socket (`None` until set here).
#[derive(Debug, Default)]
pub(crate) struct ReadTimeout(Option<Option<Duration>>);

impl ReadTimeout {
    /// Makes `socket`'s read timeout `wanted`, unless the one set is close enough: within
    /// 1/16 of the wait or 1 ms. The deadlines behind these waits tolerate a read that wakes
    /// that much early (the caller sees nothing due and reads again) or late.
    pub(crate) fn set(&mut self, socket: &TcpStream, wanted: Option<Duration>) {
        let close = match (self.0, wanted) {
            (Some(Some(set)), Some(wanted)) => {
                set.abs_diff(wanted) <= (wanted / 16).max(Duration::from_millis(1))
            }
            (Some(set), wanted) => set == wanted,
            (None, _) => false,
        };
        if !close && socket.set_read_timeout(wanted).is_ok() {
            self.0 = Some(wanted);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::{TcpListener, TcpStream};
    use std::time::Duration;

    use super::ReadTimeout;

    #[test]
    fn a_timeout_close_to_the_one_set_is_not_set_again() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let socket = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let secs = |s: f64| Some(Duration::from_secs_f64(s));
        let mut timeout = ReadTimeout::default();
        timeout.set(&socket, secs(10.0));
        assert_eq!(socket.read_timeout().unwrap(), secs(10.0));
        // A deadline that moved a little (the next request on a keep-alive connection).
        timeout.set(&socket, secs(9.9));
        timeout.set(&socket, secs(10.2));
        assert_eq!(socket.read_timeout().unwrap(), secs(10.0), "left as it was");
        timeout.set(&socket, secs(5.0));
        assert_eq!(socket.read_timeout().unwrap(), secs(5.0));
        timeout.set(&socket, None);
        assert_eq!(socket.read_timeout().unwrap(), None);
    }
}
