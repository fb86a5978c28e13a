//! Request bytes (arbitrary, or built from HTTP pieces), cut points, limits, timeouts and
//! responses → `http1::ServerConnection`, answering each request as the input says.
//!
//! Never panics; events come in the order `Head, Data*, End` per request, or end in one
//! `Failed`; commands fail only with a `UsageError`; every response written starts with a
//! status line; nothing follows a close.
#![no_main]

use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use bytes::Bytes;
use http::{Response, StatusCode};
use libfuzzer_sys::fuzz_target;
use zest_core::http1::{Config, ServerConnection, ServerEvent, Transmit};
use zest_fuzz::http1::{render, Piece};

#[derive(Arbitrary, Debug)]
enum Answer {
    /// `send_response` with this status, body and maybe `Connection: close`.
    Full { status: u16, body: Vec<u8>, close: bool },
    /// `send_head`, then these chunks, then `finish` (or not).
    Stream { status: u16, chunks: Vec<Vec<u8>>, finish: bool },
    /// `reject` with this status.
    Reject(u16),
    /// `close`.
    Close,
}

#[derive(Arbitrary, Debug)]
struct Case {
    max_head: u16,
    max_body: Option<u16>,
    eof: bool,
    /// Cut points, each with the seconds that pass before the next chunk arrives.
    cuts: Vec<(u16, u8)>,
    answers: Vec<Answer>,
    pieces: Vec<Piece>,
}

struct Driver {
    server: ServerConnection,
    now: Instant,
    answers: std::vec::IntoIter<Answer>,
    closed: bool,
    /// A response head is due at the start of the next write.
    head_due: bool,
    streaming: bool,
    in_request: bool,
}

impl Driver {
    fn drain(&mut self) {
        loop {
            while let Some(t) = self.server.poll_transmit() {
                assert!(!self.closed, "a transmit after a close: {t:?}");
                match t {
                    Transmit::Close => self.closed = true,
                    Transmit::Write(bytes) if self.head_due => {
                        assert!(bytes.starts_with(b"HTTP/1.1 "), "not a status line: {bytes:?}");
                        self.head_due = false;
                    }
                    Transmit::Write(_) => {}
                }
            }
            let Some(event) = self.server.poll_event() else { return };
            match event {
                ServerEvent::Head(_) => {
                    assert!(!self.in_request, "a head inside a request");
                    self.in_request = true;
                }
                ServerEvent::Data(bytes) => assert!(self.in_request && !bytes.is_empty()),
                ServerEvent::End => {
                    assert!(self.in_request, "an end outside a request");
                    self.in_request = false;
                    self.answer();
                }
                ServerEvent::Failed(e) => {
                    self.in_request = false;
                    if e.status().is_none() {
                        assert!(self.server.is_closed(), "{e} closes");
                    } else {
                        let status = e.status().unwrap();
                        self.server
                            .reject(status)
                            .expect("a failure with a status can be rejected");
                        self.head_due = true;
                    }
                }
                other => panic!("unknown event {other:?}"),
            }
        }
    }

    fn answer(&mut self) {
        let status = |code: u16| StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
        let answer =
            self.answers.next().unwrap_or(Answer::Full { status: 200, body: vec![], close: false });
        // Commands may be refused (a 204 with a body, say); a refusal changes nothing.
        match answer {
            Answer::Full { status: code, body, close } => {
                let mut response = Response::new(Bytes::from(body));
                *response.status_mut() = status(code);
                if close {
                    response.headers_mut().insert("connection", "close".parse().unwrap());
                }
                self.head_due = self.server.send_response(self.now, response).is_ok();
            }
            Answer::Stream { status: code, chunks, finish } => {
                let mut head = Response::new(());
                *head.status_mut() = status(code);
                if self.server.send_head(head).is_ok() {
                    self.head_due = true;
                    self.streaming = true;
                    for chunk in chunks {
                        let _ = self.server.send_data(Bytes::from(chunk));
                    }
                    if finish {
                        self.server.finish(self.now).unwrap();
                        self.streaming = false;
                    }
                }
            }
            Answer::Reject(code) => self.head_due = self.server.reject(status(code)).is_ok(),
            Answer::Close => self.server.close(),
        }
    }
}

fuzz_target!(|case: Case| {
    let mut config = Config::default();
    config.max_head_bytes = match case.max_head {
        0 => config.max_head_bytes,
        n => usize::from(n.max(16)),
    };
    config.max_body_bytes = case.max_body.map(u64::from);
    let now = Instant::now();
    let mut d = Driver {
        server: ServerConnection::new(config, now),
        now,
        answers: case.answers.into_iter(),
        closed: false,
        head_due: false,
        streaming: false,
        in_request: false,
    };
    let bytes = render(&case.pieces);
    let len = bytes.len();
    let mut cuts: Vec<(usize, u8)> =
        case.cuts.iter().map(|&(c, s)| (usize::from(c) % (len + 1), s)).collect();
    cuts.sort_unstable();
    let mut start = 0;
    for (cut, secs) in cuts.into_iter().chain([(len, 0)]) {
        d.server.handle_data(&bytes[start..cut]);
        d.drain();
        start = cut;
        d.now += Duration::from_secs(secs.into());
        d.server.handle_timeout(d.now);
        d.drain();
    }
    if case.eof {
        d.server.handle_end();
        d.drain();
    }
    if d.streaming && !d.closed {
        let _ = d.server.finish(d.now);
        d.drain();
    }
});
