//! Tests for the HTTP/1.1 machines: each alone on scripted bytes, and both wired together.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};

use super::{ClientConnection, ClientEvent, Config, ServerConnection, ServerEvent, Transmit};
use crate::testkit::VirtualClock;

mod client;
mod pair;
mod server;

fn t0() -> Instant {
    VirtualClock::new().now()
}

/// Writes every queued transmit into one buffer; reports whether a close was queued last.
fn written(mut poll: impl FnMut() -> Option<Transmit>) -> (Vec<u8>, bool) {
    let (mut bytes, mut closed) = (Vec::new(), false);
    while let Some(t) = poll() {
        assert!(!closed, "nothing may follow a close");
        match t {
            Transmit::Write(b) => bytes.extend_from_slice(&b),
            Transmit::Close => closed = true,
        }
    }
    (bytes, closed)
}

fn client_events(c: &mut ClientConnection) -> Vec<ClientEvent> {
    std::iter::from_fn(|| c.poll_event()).collect()
}

fn server_events(s: &mut ServerConnection) -> Vec<ServerEvent> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

/// Joins adjacent `Data` events, which differ only by how reads were split.
fn merged_client(events: Vec<ClientEvent>) -> Vec<ClientEvent> {
    let mut out: Vec<ClientEvent> = Vec::new();
    for e in events {
        match (out.last_mut(), e) {
            (Some(ClientEvent::Data(prev)), ClientEvent::Data(next)) => {
                *prev = Bytes::from([&prev[..], &next[..]].concat());
            }
            (_, e) => out.push(e),
        }
    }
    out
}

fn merged_server(events: Vec<ServerEvent>) -> Vec<ServerEvent> {
    let mut out: Vec<ServerEvent> = Vec::new();
    for e in events {
        match (out.last_mut(), e) {
            (Some(ServerEvent::Data(prev)), ServerEvent::Data(next)) => {
                *prev = Bytes::from([&prev[..], &next[..]].concat());
            }
            (_, e) => out.push(e),
        }
    }
    out
}

fn get(uri: &str) -> Request<Bytes> {
    Request::get(uri).body(Bytes::new()).unwrap()
}

fn post(uri: &str, body: &'static [u8]) -> Request<Bytes> {
    Request::post(uri).body(Bytes::from_static(body)).unwrap()
}

fn ok(body: &'static [u8]) -> Response<Bytes> {
    Response::new(Bytes::from_static(body))
}

fn data(b: &'static [u8]) -> ClientEvent {
    ClientEvent::Data(Bytes::from_static(b))
}

fn sdata(b: &'static [u8]) -> ServerEvent {
    ServerEvent::Data(Bytes::from_static(b))
}

fn small(max_head_bytes: usize, max_body_bytes: Option<u64>) -> Config {
    Config { max_head_bytes, max_body_bytes, ..Config::default() }
}

const SECOND: Duration = Duration::from_secs(1);
